import Coffer
import CofferTestSupport
import XCTest

@testable import CofferRepair

final class RepairWriterOutputTests: XCTestCase {
    func testSalvagedDatabaseIsWrittenThroughCoffer() throws {
        let dir = try TemporaryDirectory()
        let source = dir.path("src.db")
        try Shell.sqlcipher(source, standardSchemaSQL + "\nPRAGMA user_version = 42;")
        let output = dir.path("out.db")
        // SQLCipher 3's derivation, so that the library and the shell below open it with the passphrase.
        let writer = try RepairWriter(
            path: output, encryption: .passphrase("new"), cipher: CipherOptions(keyDerivation: .sqlcipher3), batchSize: 300)
        var sink = writer
        let report = try Salvager(path: source, key: .passphrase("pw")).run(into: &sink)
        try writer.database.close()

        XCTAssertEqual(writer.outcome.rowsWritten, report.rowsSalvaged)
        XCTAssertEqual(writer.outcome.rowsRejected, 0)
        XCTAssertEqual(writer.outcome.objectsFailed, [])
        XCTAssertEqual(Set(writer.outcome.objectsCreated), ["msgs_sender", "kv_v", "recent", "kv_touch"])
        for table in ["msgs", "kv"] {
            XCTAssertEqual(
                Set(try GroundTruth.rows(output, key: "new", table: table, withRowid: table == "msgs")),
                Set(try GroundTruth.rows(source, key: "pw", table: table, withRowid: table == "msgs")), table)
        }
        let check = try Shell.run(
            "sqlcipher", output,
            "PRAGMA key='new';\nPRAGMA cipher_page_size=4096;\nPRAGMA integrity_check;\nPRAGMA user_version;\n")
        XCTAssertEqual(check.split(separator: "\n").suffix(2), ["ok", "42"])
    }

    func testHostileSchemaSQLIsRefused() throws {
        let database = try Database.inMemory()
        func runs(_ kind: UntrustedCreate.Kind, _ name: String, _ sql: String) -> Bool {
            (try? database.writeWithoutTransaction { connection in
                try UntrustedCreate(kind: kind, name: name, table: "t", sql: sql).run(on: connection)
            }) != nil
        }
        XCTAssertTrue(runs(.table, "t", "create  table t(a, b CHECK (length(b) > 0))"))
        XCTAssertFalse(runs(.table, "u", "CREATE TEMP TABLE u(a)"))
        XCTAssertFalse(runs(.table, "t", "DROP TABLE t"))
        XCTAssertFalse(runs(.table, "v", "CREATE TABLE v(a); DROP TABLE t"))
        XCTAssertFalse(runs(.table, "w", "CREATE TABLE x(a)"), "another name than sqlite_master's")
        XCTAssertFalse(runs(.table, "w", "ATTACH ':memory:' AS w"))
        XCTAssertFalse(runs(.table, "w", "PRAGMA writable_schema = 1"))
        XCTAssertFalse(runs(.table, "w", "SELECT 1"), "runs, but creates nothing")
        XCTAssertFalse(runs(.index, "i", "CREATE TABLE i(a)"), "a table where an index was expected")
        XCTAssertTrue(runs(.index, "i", "CREATE INDEX i ON t(lower(b)) WHERE a > 1"))
        XCTAssertTrue(runs(.virtualTable, "f", "CREATE VIRTUAL TABLE f USING fts4(x, tokenize=porter)"))
        XCTAssertTrue(runs(.virtualTable, "r", "CREATE VIRTUAL TABLE r USING rtree(id, a, b)"))
        XCTAssertFalse(runs(.virtualTable, "g", "CREATE VIRTUAL TABLE g USING no_such_module(x)"), "a module the library lacks")
        let names = try database.read { connection in
            try connection.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").compactMap {
                row -> String? in row["name"]
            }
        }
        XCTAssertEqual(
            names,
            ["f", "f_content", "f_docsize", "f_segdir", "f_segments", "f_stat", "r", "r_node", "r_parent", "r_rowid", "t"])
    }
}
