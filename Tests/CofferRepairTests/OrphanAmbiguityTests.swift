import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Two tables of the same shape whose interior pages (roots included) are zeroed: every surviving leaf fits
/// both equally. Such leaves used to be dropped as doubtful (0 rows); now each run of leaves that can be one
/// table becomes a table of its own named after its candidates, never merged into either table or with the
/// other's leaves. Files from the system `sqlite3` and the `sqlcipher` 3.4.1 shell.
final class OrphanAmbiguityTests: XCTestCase {
    private let sql = """
        CREATE TABLE inbox(id INTEGER PRIMARY KEY, chat INTEGER, sender TEXT, body TEXT);
        CREATE TABLE outbox(id INTEGER PRIMARY KEY, chat INTEGER, sender TEXT, body TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 8000)
        INSERT INTO inbox(chat, sender, body) SELECT i % 50, 'user' || (i % 17), printf('in %d %s', i, substr(hex(zeroblob(60)), 1, 20 + i % 90)) FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 8000)
        INSERT INTO outbox(chat, sender, body) SELECT i % 50, 'user' || (i % 13), printf('out %d %s', i, substr(hex(zeroblob(60)), 1, 20 + i % 90)) FROM n;
        DELETE FROM inbox WHERE id % 7 = 0;
        """

    private func run(encrypted: Bool) throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("two.db")
        if encrypted {
            try Shell.sqlcipher(path, key: "pw", sql)
        } else {
            try Shell.run("sqlite3", path, "PRAGMA page_size=4096;\n" + sql)
        }
        let key: Encryption = encrypted ? .passphrase("pw") : .none
        let pristine = try DatabaseFile(path: path, key: key)
        var truth: [String: Set<[SalvagedValue]>] = [:]
        var sink = CollectingSink()
        _ = try Salvager(file: pristine).run(into: &sink)
        for table in ["inbox", "outbox"] { truth[table] = sink.rowSet(table) }
        XCTAssertEqual(truth["inbox"]?.count, 8000 - 1142)
        let interior = PageRoles.classify(pristine).filter { $0.role == .tableInterior }.map(\.pageNumber)
        XCTAssertGreaterThanOrEqual(interior.count, 2)
        for page in interior { try Damage.zeroPage(path, page: page, pageSize: 4096) }

        var damagedSink = CollectingSink()
        let report = try Salvager(file: try DatabaseFile(path: path, key: key)).run(into: &damagedSink)
        let recovered = damagedSink.tables.map(\.name).filter { $0.hasPrefix("recovered_inbox_or_outbox_") }
        XCTAssertGreaterThanOrEqual(recovered.count, 2, "\(damagedSink.tables.map(\.name))")
        // A row is identified by its rowid and body. An inferred table's columns are `id` (the rowid), then the
        // record's fields, whose first (NULL in every record: the INTEGER PRIMARY KEY) reads the rowid: each
        // row past its `id` is exactly the original row.
        func identity(_ row: [SalvagedValue]) -> [SalvagedValue] { [row.first ?? .null, row.last ?? .null] }
        let originals = (truth["inbox"] ?? []).union(truth["outbox"] ?? [])
        for name in recovered {
            let altered = damagedSink.rowSet(name).filter { !originals.contains(Array($0.dropFirst())) }
            XCTAssertEqual(altered.count, 0, "\(name): rows that are no original row: \(altered.prefix(2))")
        }
        let inbox = Set((truth["inbox"] ?? []).map(identity))
        let outbox = Set((truth["outbox"] ?? []).map(identity))
        var all = Set<[SalvagedValue]>()
        for name in recovered + ["inbox", "outbox"] {
            let rows = Set(damagedSink.rowSet(name).map(identity))
            all.formUnion(rows)
            // Every table holds rows of one original table only.
            XCTAssertTrue(rows.isSubset(of: inbox) || rows.isSubset(of: outbox), "\(name) mixes the two tables' rows")
        }
        XCTAssertEqual(all, inbox.union(outbox), "every row survives")
        XCTAssertEqual(report.pagesOk, report.pagesTotal - interior.count)
    }

    func testPlaintext() throws { try run(encrypted: false) }

    func testSQLCipher3() throws { try run(encrypted: true) }
}
