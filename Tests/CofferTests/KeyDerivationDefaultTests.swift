import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// New databases derive their key with PBKDF2-HMAC-SHA512 and 256,000 rounds; files written with SQLCipher
/// 3's derivation (and its 1024-byte pages) keep opening, and are upgraded in place by a rekey.
final class KeyDerivationDefaultTests: XCTestCase {
    private func makeDefaultDatabase(at path: String, passphrase: String = "pw") throws {
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase(passphrase)))
        XCTAssertEqual(database.keyDerivation, .pbkdf2SHA512(rounds: 256_000))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT)")
            try db.execute(sql: "INSERT INTO item(label) VALUES ('a'), ('b')")
        }
        try database.close()
    }

    /// Writes a file with the `sqlcipher` 3.4.1 shell's own defaults (SHA-1 64,000, 1024-byte pages).
    private func makeShellDatabase(at path: String, extra: String = "") throws {
        let made = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", "-bail", path],
            input: """
                PRAGMA key = 'pw';
                CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT);
                INSERT INTO item(label) VALUES ('a'), ('b');
                \(extra)
                """)
        XCTAssertEqual(made.status, 0, made.stderr)
    }

    private func labels(_ database: Database) throws -> [String?] {
        try database.read { try $0.fetchAll(sql: "SELECT label FROM item ORDER BY id").map { $0["label"] as String? } }
    }

    func testNewDatabaseIsPBKDF2SHA512With256000RoundsAndNotSQLCipher3s() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("new.db")
        try makeDefaultDatabase(at: path)

        // The documented derivation, computed here with swift-crypto, opens it through the shell's raw-key form.
        let spec = try ShellRawKey.spec(passphrase: "pw", path: path)
        let raw = try Shell.sqlcipher(path, passphrase: spec, "SELECT group_concat(label) FROM item;")
        XCTAssertEqual(raw.stdout, "a,b\n", raw.stderr)
        // SQLCipher 3's derivation does not: neither the shell with the passphrase…
        let shell = try Shell.sqlcipher(path, passphrase: "pw", "SELECT count(*) FROM item;")
        XCTAssertNotEqual(shell.status, 0)
        XCTAssertTrue(shell.stderr.contains("not a database"), shell.stderr)
        let sha1 = try ShellRawKey.spec(passphrase: "pw", path: path, sha512: false, rounds: 64000)
        XCTAssertNotEqual(try Shell.sqlcipher(path, passphrase: sha1, "SELECT count(*) FROM item;").status, 0)
        // …nor Coffer told to use it, at the file's own page size, without detection.
        let weak = CipherOptions(pageSize: 4096, keyDerivation: .sqlcipher3, detectsExistingSettings: false)
        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("pw"), cipher: weak)))
        {
            guard case CofferError.wrongPassphrase = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue("\($0)".contains("PBKDF2-HMAC-SHA1 64000 rounds"), "\($0)")
        }
        // With detection on, the same options still find the file's derivation.
        let found = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw"), cipher: .sqlcipher3))
        XCTAssertEqual(found.keyDerivation, .coffer)
        XCTAssertEqual(found.configuration.cipher.pageSize, 4096)
        XCTAssertEqual(try labels(found), ["a", "b"])
        XCTAssertEqual(try found.info().cipher?.kdfName, "pbkdf2-hmac-sha512")
    }

    func testSQLCipher3ShellDefaultFileOpensWithDefaultConfiguration() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shell.db")
        try makeShellDatabase(at: path)
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(database.keyDerivation, .sqlcipher3)
        XCTAssertEqual(database.configuration.cipher.pageSize, 1024)
        XCTAssertEqual(try labels(database), ["a", "b"])
        try database.write { try $0.execute(sql: "INSERT INTO item(label) VALUES ('c')") }
        try database.close()
        // Still the shell's file: its own defaults read what Coffer wrote.
        let back = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", path], input: "PRAGMA key = 'pw';\nSELECT count(*) FROM item;\n")
        XCTAssertEqual(back.stdout, "3\n", back.stderr)
    }

    func testSQLCipher3ShellFileWithLiveWALOpens() throws {
        let directory = try TemporaryDirectory()
        let live = directory.path("live.db")
        let copy = directory.path("copy.db")
        // Copied while the shell still holds it, so the copy has a WAL with uncheckpointed commits.
        try makeShellDatabase(
            at: live,
            extra: """
                PRAGMA journal_mode = WAL;
                PRAGMA wal_autocheckpoint = 0;
                INSERT INTO item(label) VALUES ('in-wal');
                .shell cp '\(live)' '\(copy)'; cp '\(live)-wal' '\(copy)-wal'
                """)
        XCTAssertGreaterThan(FileScan.size(copy + "-wal"), 0)
        let database = try Database(path: copy, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(database.configuration.cipher.pageSize, 1024)
        XCTAssertEqual(try labels(database), ["a", "b", "in-wal"])
        try database.close()
    }

    func testRawKeyFileWithShellDefaultPagesOpens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("raw.db")
        let hex = String(repeating: "0123456789abcdef", count: 4)
        let made = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", "-bail", path],
            input:
                "PRAGMA key = \"x'\(hex)'\";\nCREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT);\nINSERT INTO item(label) VALUES ('a');\n"
        )
        XCTAssertEqual(made.status, 0, made.stderr)
        let key = Data((0..<32).map { UInt8(($0 % 8) * 0x22 + 0x01) })
        XCTAssertEqual(key.map { String(format: "%02x", $0) }.joined(), hex)
        let database = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
        XCTAssertNil(database.keyDerivation)
        XCTAssertEqual(database.configuration.cipher.pageSize, 1024)
        XCTAssertEqual(try labels(database), ["a"])
        try database.close()
    }

    func testWrongPassphraseNamesTheSettingsTried() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shell.db")
        try makeShellDatabase(at: path)
        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("nope")))) {
            guard case CofferError.wrongPassphrase = $0 else { return XCTFail("\($0)") }
            let message = "\($0)"
            for part in ["PBKDF2-HMAC-SHA512 256000 rounds", "PBKDF2-HMAC-SHA1 64000 rounds", "1024", "4096"] {
                XCTAssertTrue(message.contains(part), message)
            }
        }
    }

    func testOldFileIsUpgradedInPlaceByRekey() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.db")
        try makeShellDatabase(at: path)
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(database.keyDerivation, .sqlcipher3)
        XCTAssertEqual(try labels(database), ["a", "b"])
        try database.changeKeyDerivation(to: .coffer)
        XCTAssertEqual(database.keyDerivation, .coffer)
        XCTAssertEqual(try labels(database), ["a", "b"])
        try database.write { try $0.execute(sql: "INSERT INTO item(label) VALUES ('c')") }
        try database.close()

        let sqlcipher3Only = CipherOptions(pageSize: 1024, keyDerivation: .sqlcipher3, detectsExistingSettings: false)
        XCTAssertThrowsError(
            try Database(path: path, configuration: Configuration(encryption: .passphrase("pw"), cipher: sqlcipher3Only)))
        XCTAssertNotEqual(try Shell.sqlcipher(path, passphrase: "pw", pageSize: 1024, "SELECT 1 FROM item;").status, 0)
        let reopened = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(reopened.keyDerivation, .coffer)
        XCTAssertEqual(reopened.configuration.cipher.pageSize, 1024)
        XCTAssertEqual(try labels(reopened), ["a", "b", "c"])
        // A new passphrase takes the configured derivation unless told otherwise.
        try reopened.changePassphrase(to: .passphrase("new"), keyDerivation: .sqlcipher3)
        XCTAssertEqual(reopened.keyDerivation, .sqlcipher3)
        try reopened.close()
        let shell = try Shell.sqlcipher(path, passphrase: "new", pageSize: 1024, "SELECT count(*) FROM item;")
        XCTAssertEqual(shell.stdout, "3\n", shell.stderr)
    }

    func testANewPassphraseOnAnOldFileTakesTheConfiguredDerivation() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("old.db")
        try makeShellDatabase(at: path)
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(database.keyDerivation, .sqlcipher3)
        try database.changePassphrase(to: .passphrase("new"))
        XCTAssertEqual(database.keyDerivation, .coffer)
        XCTAssertEqual(try labels(database), ["a", "b"])
        try database.close()
        let spec = try ShellRawKey.spec(passphrase: "new", path: path)
        let shell = try Shell.sqlcipher(path, passphrase: spec, pageSize: 1024, "SELECT count(*) FROM item;")
        XCTAssertEqual(shell.stdout, "2\n", shell.stderr)
    }

    func testSQLCipher4FileIsRefusedWithAMigrateHint() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3("SQLCipher 4 opens SQLCipher 4 files (SQLCipher4Tests.testSQLCipher4FilesOpen)"))
        let directory = try TemporaryDirectory()
        let path = directory.path("v4.db")
        let made = try Shell.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlcipher3, sys; c = sqlcipher3.connect(sys.argv[1]); c.execute(\"PRAGMA key = 'pw'\"); "
                    + "c.execute('CREATE TABLE t(x)'); c.execute('INSERT INTO t VALUES (1)'); c.commit(); c.close()",
                path,
            ], input: "")
        try XCTSkipUnless(made.status == 0, "python3 sqlcipher3 unavailable: \(made.stderr)")
        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))) {
            guard case CofferError.notADatabase = $0 else { return XCTFail("\($0)") }
            XCTAssertTrue("\($0)".contains("SQLCipher 4") && "\($0)".contains("coffer migrate"), "\($0)")
        }
        // A wrong passphrase on the same file is still just that.
        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("no")))) {
            guard case CofferError.wrongPassphrase = $0 else { return XCTFail("\($0)") }
        }
    }
}
