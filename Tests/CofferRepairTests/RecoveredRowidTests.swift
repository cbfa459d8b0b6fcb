import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Issue #38, item 2: tables recovered without a schema keep the rowid of every row. A plaintext file
/// (Python's `sqlite3`) loses page 1, no WAL: every table tree comes back as `recovered_root_<page>`, whose
/// `id` column holds the rowid and `c1…` the record's fields; a first field that is NULL in every record of
/// the tree is the INTEGER PRIMARY KEY alias, stored as NULL, and reads the rowid. A table with no alias
/// (or whose first column is sometimes NULL and sometimes not) keeps its values as stored. Each recovered
/// row, in OUTPUT too, must equal the producer's `SELECT rowid, *` row.
final class RecoveredRowidTests: XCTestCase {
    static let sql = """
        PRAGMA page_size=4096;
        CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT, body TEXT);
        CREATE TABLE events(kind TEXT, at INTEGER);
        CREATE TABLE tags(label TEXT, weight REAL);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
        INSERT INTO notes(id, title, body) SELECT i * 3 + 1000, 'title ' || i, substr(hex(zeroblob(60)), 1, i % 90) FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 700)
        INSERT INTO events SELECT 'kind ' || (i % 5), 1700000000 + i FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 50)
        INSERT INTO tags SELECT CASE WHEN i % 4 = 0 THEN NULL ELSE 'tag ' || i END, i + 0.25 FROM n;
        DELETE FROM notes WHERE id % 7 = 0;
        DELETE FROM events WHERE rowid % 10 = 0;
        """

    func testTablesRecoveredWithoutASchemaKeepTheirRowids() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("notes.db")
        try Shell.python(path, Self.sql)
        var truth: [String: [[SalvagedValue]]] = [:]
        for table in ["notes", "events", "tags"] { truth[table] = try GroundTruth.rows(path, key: .none, table: table) }
        XCTAssertEqual(truth["notes"]?.count, 3000 - 428)
        var visited = Set<UInt32>()
        let roots = Dictionary(
            uniqueKeysWithValues: Schema.read(from: try DatabaseFile(path: path, key: .none), visited: &visited).tables.map {
                ($0.name, $0.rootPage)
            })
        try Damage.zeroPage(path, page: 1, pageSize: 4096)

        let (sink, _) = try salvage(path, key: .none)
        let output = dir.path("out.db")
        let writer = try RepairWriter(path: output, encryption: .none)
        var outputSink = writer
        _ = try Salvager(path: path, key: .none).run(into: &outputSink)
        try writer.close()
        for table in ["notes", "events", "tags"] {
            let name = "recovered_root_\(try XCTUnwrap(roots[table]))"
            let expected = Set(try XCTUnwrap(truth[table]))
            XCTAssertEqual(Set((sink.rows[name] ?? []).map(\.values)), expected, "\(table) → \(name)")
            XCTAssertEqual(
                Set(try GroundTruth.rows(output, key: .none, table: name, withRowid: false)), expected, "OUTPUT's \(name)")
        }
        let notes = try XCTUnwrap(sink.tables.first { $0.name == "recovered_root_\(roots["notes"] ?? 0)" })
        XCTAssertEqual(notes.sql, "CREATE TABLE \(notes.name)(id INTEGER PRIMARY KEY, c1, c2, c3)")
    }
}
