import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Damage found by the realistic-corpus matrix (RealAppDamageMatrixTests) on files written by the shells:
/// - a table altered by ADD COLUMN whose root interior page is lost: its leaves hold records shorter than the
///   table, and were dropped as "another table's" (a dropped table's free page could look so). When the
///   freelist and sqlite_master were both read completely no unclaimed leaf can be free or another table's:
///   every leaf comes back (legacy app, flipped root: 37 of 85 rows before);
/// - a lost sqlite_master leaf: the report says entries were lost, names each virtual table whose shadow
///   tables survived without it, and a WITHOUT ROWID table whose entry was on the lost page comes back in a
///   recovered table instead of being ignored.
final class LostSchemaEntryRecallTests: XCTestCase {
    private static let alteredTable = """
        CREATE TABLE account(id INTEGER PRIMARY KEY, email TEXT);
        CREATE TABLE item(id INTEGER PRIMARY KEY AUTOINCREMENT, account_id INTEGER, title TEXT, price NUMERIC);
        CREATE TABLE scratch(id INTEGER PRIMARY KEY, junk TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
        INSERT INTO item(account_id, title, price) SELECT i % 9, printf('title %d %s', i, substr(hex(zeroblob(40)), 1, 20 + i % 50)), i * 0.25 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 150)
        INSERT INTO scratch(junk) SELECT printf('%d %s', i, hex(zeroblob(30))) FROM n;
        ALTER TABLE item ADD COLUMN tags TEXT;
        DROP TABLE scratch;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 40)
        INSERT INTO item(account_id, title, price, tags) SELECT i, printf('late %d', i), 12, 'new' FROM n;
        INSERT INTO account(email) VALUES ('a@example.com'), ('b@example.com');
        DELETE FROM item WHERE id % 5 = 0;
        """

    func testLeavesWithShortRecordsComeBackWhenTheRootIsZeroed() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("plain.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=1024;\n" + Self.alteredTable)
        let truth = Set(try GroundTruth.rows(path, key: .none, pageSize: 1024, table: "item"))
        let root = try XCTUnwrap(
            UInt32(Shell.run("sqlite3", path, "SELECT rootpage FROM sqlite_master WHERE name = 'item';").trimmed))
        try Damage.zeroPage(path, page: root, pageSize: 1024)

        let (sink, report) = try salvage(path, key: .none)
        XCTAssertEqual(rowsAsRead(sink.rowSet("item")), truth, "every leaf of item adopted")
        XCTAssertEqual(report.orphanPagesIgnored, 0)
        XCTAssertEqual(report.schemaIssues, [], "sqlite_master is intact")
    }

    func testLeavesWithShortRecordsComeBackWhenTheRootFailsItsHMAC() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("enc.db")
        try Shell.sqlcipher(path, pageSize: 1024, Self.alteredTable)
        let truth = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "item"))
        var visited = Set<UInt32>()
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        let root = try XCTUnwrap(Schema.read(from: file, visited: &visited).tables.first { $0.name == "item" }?.rootPage)
        try Damage.flip(path, page: root, pageSize: 1024, offsetInPage: 200)

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertEqual(rowsAsRead(sink.rowSet("item")), truth, "every authenticated leaf of item adopted")
        XCTAssertEqual(report.pagesBadHMAC, 1)
    }

    func testAVirtualTableWhoseEntryIsLostIsNamedInTheReport() throws {
        let dir = try TemporaryDirectory()
        // `zone` on a sqlite_master leaf of its own, its shadow tables on the next one.
        let (path, leaves) = try schemaLayout(in: dir) { leaves in
            leaves.contains { $0.names.contains("zone") && !$0.names.contains { $0.hasPrefix("zone_") } }
        }
        let lost = try XCTUnwrap(leaves.first { $0.names.contains("zone") }?.page)
        try Damage.zeroPage(path, page: lost, pageSize: 1024)

        let (sink, report) = try salvage(path, key: .none)
        XCTAssertEqual(report.schemaIssues.map(\.name), ["sqlite_master", "zone"])
        XCTAssertEqual(sink.rowSet("zone_rowid").count, 2, "its shadow tables kept as ordinary tables")
    }

    func testAWithoutRowidTableWhoseEntryIsLostComesBackRecovered() throws {
        let dir = try TemporaryDirectory()
        let (path, leaves) = try schemaLayout(in: dir) { leaves in
            leaves.contains { $0.names.contains("tile") && !$0.names.contains { $0.hasPrefix("zone") } }
        }
        let tiles = Set(try GroundTruth.rows(path, key: .none, pageSize: 1024, table: "tile", withRowid: false))
        let lost = try XCTUnwrap(leaves.first { $0.names.contains("tile") }?.page)
        try Damage.zeroPage(path, page: lost, pageSize: 1024)

        let (sink, report) = try salvage(path, key: .none)
        XCTAssertEqual(report.schemaIssues.first?.name, "sqlite_master")
        let recovered = sink.rows.keys.filter { $0.hasPrefix("recovered_") }
        XCTAssertEqual(recovered.count, 1, "tile's rows in one recovered table")
        XCTAssertEqual(Set(recovered.flatMap { sink.rowSet($0) }), tiles)
        XCTAssertEqual(sink.rowSet("zone_rowid").count, 2)
    }

    /// A 1024-byte-page file whose long CREATE statements spread sqlite_master over several leaves, with an
    /// R*Tree and a WITHOUT ROWID table: the first padding of the fillers whose sqlite_master leaves
    /// (page, names) satisfy `wanted`.
    private func schemaLayout(in dir: TemporaryDirectory, _ wanted: ([(page: UInt32, names: [String])]) -> Bool) throws
        -> (String, [(page: UInt32, names: [String])])
    {
        for padding in stride(from: 0, to: 600, by: 12) {
            let path = dir.path("maps-\(padding).db")
            var sql = "PRAGMA page_size=1024;\n"
            for index in 0..<4 {
                let columns = (0..<(12 + index * 3)).map { "column_\($0) TEXT" }.joined(separator: ", ")
                sql += "CREATE TABLE filler\(index)(id INTEGER PRIMARY KEY, \(columns));\n"
            }
            sql += "CREATE TABLE pad(x TEXT DEFAULT '\(String(repeating: "p", count: padding))');\n"
            sql += """
                CREATE VIRTUAL TABLE zone USING rtree_i32(id, x0, x1, y0, y1);
                CREATE TABLE filler_late(id INTEGER PRIMARY KEY, \((0..<40).map { "late_\($0) TEXT" }.joined(separator: ", ")));
                CREATE TABLE tile(z INTEGER, x INTEGER, y INTEGER, data BLOB, PRIMARY KEY(z, x, y)) WITHOUT ROWID;
                WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i+1 FROM n WHERE i < 59)
                INSERT INTO tile SELECT i / 20, i % 7, i, zeroblob(30) FROM n;
                INSERT INTO zone VALUES (1, 0, 10, 0, 10), (2, 5, 20, 5, 20);
                """
            try Shell.run("sqlite3", path, sql)
            var leaves: [(page: UInt32, names: [String])] = []
            var visited = Set<UInt32>()
            TreeWalker(source: try DatabaseFile(path: path, key: .none)).walk(root: 1, visited: &visited) { page, cells in
                guard page.type == .tableLeaf, page.pageNumber != 1 else { return }
                let names = cells.compactMap { cell -> String? in
                    guard let fields = RecordDecoder.decode(cell.localPayload), fields.count == 5,
                        case .text(let bytes) = fields[1]
                    else { return nil }
                    return String(decoding: bytes, as: UTF8.self)
                }
                leaves.append((page.pageNumber, names))
            }
            if wanted(leaves) { return (path, leaves) }
        }
        throw XCTSkip("no padding gave the wanted sqlite_master layout with this sqlite3")
    }

    /// Salvaged rows as SQLite reads them: a record written before ADD COLUMN reads NULL for `tags`.
    private func rowsAsRead(_ rows: Set<[SalvagedValue]>) -> Set<[SalvagedValue]> {
        Set(rows.map { $0 + [SalvagedValue](repeating: .null, count: max(0, 6 - $0.count)) })
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespacesAndNewlines) }
}
