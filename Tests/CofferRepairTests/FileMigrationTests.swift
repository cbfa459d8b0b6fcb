import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// `FileMigration` on files written by SQLCipher 4.12: the copy is whole, keeps user_version, opens in
/// Coffer and in the `sqlcipher` shell with identical rows, and its check catches an altered row.
final class FileMigrationTests: XCTestCase {
    private let rowSQL =
        "SELECT quote(id)||'|'||quote(sender)||'|'||quote(body)||'|'||quote(score)||'|'||quote(data) FROM msgs ORDER BY id"

    private func migrate(_ name: String, key: Encryption, to output: String, encryption: Encryption) throws -> MigrationResult {
        let path = SQLCipherFixtures.path(name)
        let file = key.isEncrypted ? try ProfileDetection.open(path: path, key: key) : try DatabaseFile(path: path, key: .none)
        return try FileMigration.run(file: file, output: output, encryption: encryption)
    }

    func testSQLCipher4FileMigratesWholeAndOpensInCofferAndTheShell() throws {
        let dir = try TemporaryDirectory()
        let output = dir.path("migrated.db")
        let result = try migrate("v4-4096.db", key: .passphrase("pw-v4-4096"), to: output, encryption: .passphrase("pw-v4-4096"))
        XCTAssertTrue(result.verified, "\(result.checks)")
        XCTAssertEqual(result.inputProfile, "sqlcipher4")
        XCTAssertEqual(result.checks.map(\.table).sorted(), ["kv", "msgs"])
        XCTAssertEqual(result.checks.first { $0.table == "msgs" }?.rowsOut, 1200)

        // The sqlcipher shell (SQLCipher 3.4.1, Coffer's settings, the key derived here) reads the same rows Coffer reads.
        let shell = try Shell.run(
            "sqlcipher", output,
            "PRAGMA key=\"\(try ShellRawKey.spec(passphrase: "pw-v4-4096", path: output))\"; PRAGMA cipher_page_size=4096;\n\(rowSQL);\nPRAGMA user_version;\nPRAGMA integrity_check;\nSELECT count(*) FROM kv;\nSELECT name FROM sqlite_master WHERE type='index';\n"
        )
        let database = try Database(path: output, configuration: Configuration(encryption: .passphrase("pw-v4-4096")))
        defer { try? database.close() }
        let coffer = try database.read { connection in
            try connection.fetchAll(sql: rowSQL).map { row -> String in
                if case .text(let line) = row[0] { return line }
                return "not text"
            }
        }
        let shellLines = shell.split(separator: "\n").map(String.init)
        XCTAssertEqual(Array(shellLines.prefix(1200)), coffer)
        XCTAssertEqual(coffer.count, 1200)
        XCTAssertEqual(Array(shellLines.dropFirst(1200)), ["7", "ok", "20", "msgs_sender"])
        let typed = try database.read { connection in
            try connection.fetchAll(sql: "SELECT id, sender, score FROM msgs WHERE id IN (1, 600, 1200) ORDER BY id").map {
                [$0[0], $0[1], $0[2]]
            }
        }
        XCTAssertEqual(
            typed,
            [
                [.integer(1), .text("user1"), .real(0.5)], [.integer(600), .text("user5"), .real(300)],
                [.integer(1200), .text("user3"), .real(600)],
            ])
    }

    func testWALAndRawKeyAndOldGenerationsMigrate() throws {
        let dir = try TemporaryDirectory()
        let wal = try migrate("v4-wal.db", key: .passphrase("pw-v4-wal"), to: dir.path("wal.db"), encryption: .passphrase("k"))
        XCTAssertTrue(wal.verified)
        XCTAssertEqual(wal.checks.first { $0.table == "msgs" }?.rowsOut, 300, "committed WAL frames in, uncommitted out")
        let raw = try migrate(
            "v4-rawkey.db", key: .rawKey(Data(SQLCipherFixtures.rawKey)), to: dir.path("raw.db"),
            encryption: .rawKey(Data(SQLCipherFixtures.rawKey)))
        XCTAssertTrue(raw.verified)
        for name in ["v1-1024.db", "v2-1024.db", "v3-1024.db", "v4-16384.db"] {
            let result = try migrate(
                name, key: .passphrase(SQLCipherFixtures.passphrase(name)), to: dir.path("out-" + name),
                encryption: .passphrase("k"))
            XCTAssertTrue(result.verified, name)
            XCTAssertEqual(result.checks.first { $0.table == "msgs" }?.rowsOut, 200, name)
        }
    }

    func testPlaintextFileMigratesIntoAnEncryptedCofferFile() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("plain.db")
        try Shell.run(
            "sqlite3", plain,
            "CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t(b) VALUES ('x'), ('y'); PRAGMA user_version = 3;")
        let file = try DatabaseFile(path: plain, key: .none)
        let output = dir.path("enc.db")
        let result = try FileMigration.run(file: file, output: output, encryption: .passphrase("new"))
        XCTAssertTrue(result.verified)
        XCTAssertEqual(result.inputProfile, "plaintext")
        XCTAssertEqual(
            try Shell.run(
                "sqlcipher", output,
                "PRAGMA key=\"\(try ShellRawKey.spec(passphrase: "new", path: output))\"; PRAGMA cipher_page_size=4096;\nSELECT b FROM t ORDER BY a; PRAGMA user_version;"
            ), "x\ny\n3\n")
        XCTAssertFalse(try Data(contentsOf: URL(fileURLWithPath: output)).starts(with: Array("SQLite format 3".utf8)))
    }

    func testColumnsAddedLaterWithADefaultMatchTheirCheck() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("altered.db")
        // Rows 1 and 2 keep two-field records; SQLite reads c, d and e from the DEFAULTs.
        try Shell.run(
            "sqlite3", plain,
            """
            CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT); INSERT INTO t(b) VALUES ('x'), ('y');
            ALTER TABLE t ADD COLUMN c INTEGER DEFAULT 7; ALTER TABLE t ADD COLUMN d TEXT DEFAULT 'dflt';
            ALTER TABLE t ADD COLUMN e REAL DEFAULT (-1.5); ALTER TABLE t ADD COLUMN f BLOB;
            INSERT INTO t(b, c, d, e, f) VALUES ('z', 1, 'own', 2.5, x'00');
            """)
        let output = dir.path("out.db")
        let result = try FileMigration.run(
            file: try DatabaseFile(path: plain, key: .none), output: output, encryption: .passphrase("k"))
        XCTAssertTrue(result.verified, "\(result.checks)")
        XCTAssertEqual(result.checks.first?.rowsOut, 3)
        XCTAssertEqual(
            try Shell.run(
                "sqlcipher", output,
                "PRAGMA key=\"\(try ShellRawKey.spec(passphrase: "k", path: output))\"; PRAGMA cipher_page_size=4096;\nSELECT quote(a)||quote(b)||quote(c)||quote(d)||quote(e)||quote(f) FROM t ORDER BY a;"
            ),
            "1'x'7'dflt'-1.5NULL\n2'y'7'dflt'-1.5NULL\n3'z'1'own'2.5X'00'\n")
    }

    func testDamagedInputIsRefusedAndTheCheckCatchesAnAlteredRow() throws {
        let dir = try TemporaryDirectory()
        let damaged = try SQLCipherFixtures.copy("v4-4096.db", to: dir)
        try Damage.flip(damaged, page: 20, pageSize: 4096, offsetInPage: 100)
        let file = try ProfileDetection.open(path: damaged, key: .passphrase("pw-v4-4096"))
        XCTAssertThrowsError(try FileMigration.run(file: file, output: dir.path("no.db"), encryption: .passphrase("k"))) {
            guard case MigrationError.inputDamaged? = $0 as? MigrationError else { return XCTFail("\($0)") }
        }

        let output = dir.path("ok.db")
        let result = try migrate("v4-1024.db", key: .passphrase("pw-v4-1024"), to: output, encryption: .passphrase("k"))
        let msgs = try XCTUnwrap(result.checks.first { $0.table == "msgs" })
        let database = try Database(path: output, configuration: Configuration(encryption: .passphrase("k")))
        defer { try? database.close() }
        try database.write { try $0.execute(sql: "UPDATE msgs SET body = body || '!' WHERE id = 77") }
        let table = try XCTUnwrap(
            try ProfileDetection.open(path: SQLCipherFixtures.path("v4-1024.db"), key: .passphrase("pw-v4-1024"))
                .salvageSchemaTable("msgs"))
        let after = try database.read { try FileMigration.readBack(table, connection: $0) }
        XCTAssertEqual(after.rows, msgs.rowsIn)
        XCTAssertNotEqual(after.hex, msgs.hashIn, "one altered row changes the table hash")
    }
}

extension DatabaseFile {
    /// The schema's description of `table`.
    func salvageSchemaTable(_ name: String) -> TableDescription? {
        var visited = Set<UInt32>()
        return Schema.read(from: self, visited: &visited).tables.first { $0.name == name }
    }
}
