import Coffer
import CofferTestSupport
import XCTest

@testable import CofferRepair

/// OUTPUT's TEXT and BLOB values are bound in place (no copy into SQLite) while the bulk load runs: every
/// value must still arrive byte for byte, whatever the row before it bound.
final class RepairWriterValueBytesTests: XCTestCase {
    func testEveryValueArrivesByteForByteThroughThePipeline() throws {
        let dir = try TemporaryDirectory()
        let source = dir.path("src.db")
        // Written by the sqlcipher 3.4.1 shell: empty TEXT and BLOB (never NULL), TEXT that is not UTF-8
        // (with a NUL inside), overflowing BLOB and TEXT, short records from before an ADD COLUMN next to
        // full ones (two insert shapes in one table), a WITHOUT ROWID table and an empty table.
        try Shell.sqlcipher(
            source,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, a, b);
            INSERT INTO t VALUES (1, '', x'');
            INSERT INTO t VALUES (2, CAST(x'ff00fe41' AS TEXT), x'00ff');
            INSERT INTO t VALUES (3, NULL, randomblob(100000));
            INSERT INTO t VALUES (4, 7, 1.5);
            INSERT INTO t VALUES (5, hex(randomblob(3000)), '');
            ALTER TABLE t ADD COLUMN c DEFAULT 'd';
            INSERT INTO t VALUES (6, x'', '', CAST(x'80' AS TEXT));
            INSERT INTO t VALUES (7, randomblob(9000), CAST(x'c3' AS TEXT), NULL);
            CREATE TABLE w(k TEXT PRIMARY KEY, v) WITHOUT ROWID;
            INSERT INTO w VALUES ('', x''), (CAST(x'fe' AS TEXT), randomblob(5000)), ('k', 'v');
            CREATE TABLE e(x);
            """)
        let output = dir.path("out.db")
        var writer = try RepairWriter(
            path: output, encryption: .passphrase("pw"), cipher: CipherOptions(keyDerivation: .sqlcipher3))
        let report = try Salvager(path: source, key: .passphrase("pw")).run(into: &writer, pipeline: SalvagePipeline())
        try writer.close()

        XCTAssertEqual(report.rowsSalvaged, 10)
        XCTAssertEqual(writer.outcome.rowsWritten, 10)
        XCTAssertEqual(writer.outcome.rowsRejected, 0)
        for (table, withRowid) in [("t", true), ("w", false), ("e", true)] {
            let written = try GroundTruth.rows(output, key: "pw", table: table, withRowid: withRowid)
            let original = try GroundTruth.rows(source, key: "pw", table: table, withRowid: withRowid)
            XCTAssertEqual(written, original, table)
        }
        let empty = try GroundTruth.rows(output, key: "pw", table: "t", withRowid: true)
        XCTAssertEqual(empty.first, [.integer(1), .integer(1), .text([]), .blob([]), .text(Array("d".utf8))])
        let check = try Shell.run(
            "sqlcipher", output, "PRAGMA key='pw';\nPRAGMA cipher_page_size=4096;\nPRAGMA integrity_check;\n")
        XCTAssertEqual(check.split(separator: "\n").last, "ok")
    }
}
