import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// A plaintext file (system `sqlite3`) whose page 1 is zeroed, no WAL, no backup: nothing names the tables,
/// but every table's B-tree is intact. Each comes back as `recovered_root_<its root page>`, listed in the
/// report, holding exactly that table's rows — two tables of the same shape sharing rowids included (grouped
/// by shape, they were merged and the rowid deduplication dropped one table's rows).
final class PageOneLostRootTablesTests: XCTestCase {
    func testEveryTableTreeBecomesATableOfItsOwn() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.db")
        try Shell.run(
            "sqlite3", path,
            """
            PRAGMA page_size=4096;
            CREATE TABLE inbox(id INTEGER PRIMARY KEY, chat INTEGER, body TEXT);
            CREATE TABLE outbox(id INTEGER PRIMARY KEY, chat INTEGER, body TEXT);
            CREATE TABLE contacts(id INTEGER PRIMARY KEY, name TEXT, phone TEXT, score REAL);
            CREATE INDEX inbox_chat ON inbox(chat);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 6000)
            INSERT INTO inbox(chat, body) SELECT i % 40, printf('in %d %s', i, substr(hex(zeroblob(50)), 1, i % 80)) FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 5000)
            INSERT INTO outbox(chat, body) SELECT i % 30, printf('out %d %s', i, substr(hex(zeroblob(50)), 1, i % 70)) FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 40)
            INSERT INTO contacts(name, phone, score) SELECT 'name ' || i, '+1555' || i, i * 1.5 FROM n;
            DELETE FROM inbox WHERE id % 9 = 0;
            """)
        let pristine = try DatabaseFile(path: path, key: .none)
        var truthSink = CollectingSink()
        _ = try Salvager(file: pristine).run(into: &truthSink)
        var visited = Set<UInt32>()
        let roots = Dictionary(
            uniqueKeysWithValues: Schema.read(from: pristine, visited: &visited).tables.map { ($0.name, $0.rootPage) })
        try Damage.zeroPage(path, page: 1, pageSize: 4096)

        var sink = CollectingSink()
        let report = try Salvager(file: try DatabaseFile(path: path, key: .none)).run(into: &sink)
        // A row is its rowid and second column (a recovered table keeps values as stored: a whole REAL as
        // an integer). Its columns are `id` (the rowid), then the record's fields, the first of which (the
        // INTEGER PRIMARY KEY, NULL in every record) reads the rowid: the original `rowid, *` row.
        func identity(_ rows: Set<[SalvagedValue]>) -> Set<[SalvagedValue]> {
            Set(rows.map { [$0.first ?? .null, $0.count > 2 ? $0[2] : .null] })
        }
        for table in ["inbox", "outbox", "contacts"] {
            let root = try XCTUnwrap(roots[table])
            let name = "recovered_root_\(root)"
            let recovered = Set((sink.rows[name] ?? []).map(\.values))
            XCTAssertEqual(identity(recovered), identity(truthSink.rowSet(table)), "\(table) → \(name)")
            XCTAssertTrue(recovered.allSatisfy { $0.count > 1 && $0[0] == $0[1] }, "id and c1 read the rowid")
            XCTAssertEqual(report.tables[name], truthSink.rowSet(table).count, "listed in the report")
        }
        XCTAssertEqual(report.rowsSalvaged, 6000 - 666 + 5000 + 40)
    }
}
