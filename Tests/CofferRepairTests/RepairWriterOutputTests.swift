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

    func testHostileSchemaSQLIsRefused() {
        XCTAssertTrue(RepairWriter.isStatement("create  table t(a)", kinds: [["CREATE", "TABLE"]]))
        XCTAssertFalse(RepairWriter.isStatement("CREATE TEMP TABLE t(a)", kinds: [["CREATE", "TABLE"]]))
        XCTAssertFalse(RepairWriter.isStatement("DROP TABLE t", kinds: [["CREATE", "TABLE"]]))
        XCTAssertFalse(RepairWriter.isStatement("CREATE TABLE t(a); DROP TABLE u", kinds: [["CREATE", "INDEX"]]))
    }
}
