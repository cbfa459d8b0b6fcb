import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The CLI contract of `--cipher-compat` and the individual cipher settings on `info`, `verify` and
/// `repair`, and of `coffer migrate`, on files written by SQLCipher 4.12 (Tests/Fixtures/sqlcipher).
/// Exit codes: 0 success, 1 damage or failure, 2 usage, 3 wrong passphrase.
final class CipherCompatCommandTests: XCTestCase {
    private var dir: TemporaryDirectory!

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        dir = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        for (file, secret) in [
            ("pw4", "pw-v4-4096"), ("pw1", "pw-v1-1024"), ("bad", "wrong"), ("new", "fresh secret"),
            ("raw", "x'" + String(repeating: "0123456789abcdef", count: 4) + "'"), ("pwc", "pw-custom"), ("pww", "pw-v4-wal"),
        ] {
            try (secret + "\n").write(toFile: dir.path(file), atomically: true, encoding: .utf8)
        }
    }

    private func fixture(_ name: String) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sqlcipher/\(name)").path
        let copy = dir.path(name)
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
            try? FileManager.default.removeItem(atPath: copy + suffix)
            try FileManager.default.copyItem(atPath: source + suffix, toPath: copy + suffix)
        }
        return copy
    }

    private func coffer(_ arguments: [String]) throws -> Shell.Result {
        try Shell.run(Shell.cofferExecutable, arguments)
    }

    func testInfoDetectsSQLCipher4AndNamesTheProfile() throws {
        let db = try fixture("v4-4096.db")
        let result = try coffer(["info", db, "--passphrase-file", dir.path("pw4")])
        XCTAssertEqual(result.status, 0, result.stderr)
        // Coffer on SQLCipher 4 opens the file through SQLite; on 3.4.1 it reads it page by page and names the
        // profile it detected.
        let cipherLine =
            TestedSQLCipher.isVersion4
            ? "pbkdf2-hmac-sha512 256000 iterations, HMAC SHA512"
            : "sqlcipher4 (PBKDF2-HMAC-SHA512 256000 rounds, HMAC-SHA512, 4096-byte pages, reserve 80)"
        XCTAssertTrue(result.stdout.contains(cipherLine), result.stdout)
        XCTAssertTrue(result.stdout.contains("msgs  1200 rows"), result.stdout)
        XCTAssertTrue(result.stdout.contains("user_version:  7"), result.stdout)
        let explicit = try coffer(["info", db, "--passphrase-file", dir.path("pw4"), "--cipher-compat", "4", "--json"])
        XCTAssertEqual(explicit.status, 0, explicit.stderr)
        XCTAssertTrue(explicit.stdout.contains("\"profile\":\"sqlcipher4\""), explicit.stdout)
        let v1 = try coffer(["info", try fixture("v1-1024.db"), "--passphrase-file", dir.path("pw1"), "--cipher-compat", "1"])
        XCTAssertEqual(v1.status, 0, v1.stderr)
        XCTAssertTrue(v1.stdout.contains("1024 bytes"), v1.stdout)
    }

    func testWrongKeysAndBadFlagsKeepTheirExitCodes() throws {
        let db = try fixture("v4-4096.db")
        for arguments in [
            ["info", db], ["verify", db], ["info", db, "--cipher-compat", "4"], ["verify", db, "--cipher-compat", "3"],
        ] {
            let result = try coffer(arguments + ["--passphrase-file", dir.path("bad")])
            XCTAssertEqual(result.status, 3, "\(arguments): \(result.stderr)")
            XCTAssertTrue(result.stderr.contains("wrong passphrase"), result.stderr)
        }
        let repair = try coffer(["repair", db, "-o", dir.path("x.db"), "--passphrase-file", dir.path("bad")])
        XCTAssertEqual(repair.status, 3, repair.stderr)
        let migrate = try coffer(["migrate", db, "-o", dir.path("y.db"), "--passphrase-file", dir.path("bad")])
        XCTAssertEqual(migrate.status, 3, migrate.stderr)
        for bad in [
            ["--cipher-compat", "5"], ["--kdf-algorithm", "md5"], ["--hmac-algorithm", "sha256"], ["--reserve", "20"],
            ["--hmac-algorithm", "sha512", "--reserve", "48"],
        ] {
            let result = try coffer(["verify", db, "--passphrase-file", dir.path("pw4")] + bad)
            XCTAssertEqual(result.status, 2, "\(bad): \(result.stderr)")
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("x.db")))
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("y.db")))
    }

    func testVerifyScansEveryPageAndTheStructure() throws {
        let db = try fixture("v4-4096.db")
        let clean = try coffer(["verify", db, "--passphrase-file", dir.path("pw4")])
        XCTAssertEqual(clean.status, 0, clean.stderr + clean.stdout)
        XCTAssertTrue(clean.stdout.contains("damaged pages:   none"), clean.stdout)
        XCTAssertTrue(clean.stdout.contains("structure:       ok"), clean.stdout)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: db))
        try handle.seek(toOffset: 9 * 4096 + 700)
        handle.write(Data([0xde, 0xad]))
        try handle.close()
        let damaged = try coffer(["verify", db, "--passphrase-file", dir.path("pw4"), "--cipher-compat", "4"])
        XCTAssertEqual(damaged.status, 1)
        XCTAssertTrue(damaged.stdout.contains("damaged pages:   10"), damaged.stdout)
    }

    func testCustomSettingsRawKeyAndWAL() throws {
        let custom = try fixture("custom.db")
        let detected = try coffer(["verify", custom, "--passphrase-file", dir.path("pwc")])
        XCTAssertEqual(detected.status, 3, "no generation's defaults fit: " + detected.stderr)
        let spelled = try coffer([
            "verify", custom, "--passphrase-file", dir.path("pwc"), "--kdf-algorithm", "sha512", "--kdf-iter", "12345",
            "--hmac-algorithm", "sha1",
        ])
        XCTAssertEqual(spelled.status, 0, spelled.stderr + spelled.stdout)
        XCTAssertTrue(
            spelled.stdout.contains("custom (PBKDF2-HMAC-SHA512 12345 rounds, HMAC-SHA1, 2048-byte pages, reserve 48)"),
            spelled.stdout)
        let raw = try coffer(["info", try fixture("v4-rawkey.db"), "--raw-key-file", dir.path("raw")])
        XCTAssertEqual(raw.status, 0, raw.stderr)
        XCTAssertTrue(raw.stdout.contains("msgs  200 rows"), raw.stdout)
        let wal = try coffer(["info", try fixture("v4-wal.db"), "--passphrase-file", dir.path("pww")])
        XCTAssertEqual(wal.status, 0, wal.stderr)
        XCTAssertTrue(wal.stdout.contains("msgs  300 rows"), wal.stdout)
    }

    func testRepairWritesCofferFormatAndNamesTheInputProfile() throws {
        let db = try fixture("v4-4096.db")
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: db))
        try handle.seek(toOffset: 14 * 4096 + 900)
        handle.write(Data([0xde, 0xad]))
        try handle.close()
        let output = dir.path("repaired.db")
        let result = try coffer(["repair", db, "-o", output, "--passphrase-file", dir.path("pw4")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("(sqlcipher4)"), result.stdout)
        // Coffer's format: its default key derivation, which the SQLCipher 3 shell's passphrase cannot open.
        let repaired = try Database(path: output, configuration: Configuration(encryption: .passphrase("pw-v4-4096")))
        XCTAssertEqual(repaired.keyDerivation, .coffer)
        XCTAssertEqual(try repaired.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        XCTAssertGreaterThan(try repaired.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM msgs") } ?? 0, 1100)
        try repaired.close()
    }

    func testMigrateCopiesChecksAndKeysTheOutput() throws {
        let db = try fixture("v4-4096.db")
        let output = dir.path("migrated.db")
        let result = try coffer([
            "migrate", db, "-o", output, "--passphrase-file", dir.path("pw4"), "--output-passphrase-file", dir.path("new"),
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("msgs  1200 rows"), result.stdout)
        XCTAssertTrue(result.stdout.contains("ok"), result.stdout)
        let migrated = try Database(path: output, configuration: Configuration(encryption: .passphrase("fresh secret")))
        XCTAssertEqual(migrated.keyDerivation, .coffer)
        let check = try migrated.read { db in
            try [
                db.fetchValue(String.self, sql: "SELECT count(*) FROM msgs"),
                db.fetchValue(String.self, sql: "PRAGMA user_version"),
                db.fetchValue(String.self, sql: "PRAGMA integrity_check"),
            ]
        }
        XCTAssertEqual(check, ["1200", "7", "ok"])
        try migrated.close()
        let again = try coffer(["migrate", db, "-o", output, "--passphrase-file", dir.path("pw4")])
        XCTAssertEqual(again.status, 2, "OUTPUT exists")

        let raw = dir.path("raw-out.db")
        let rawResult = try coffer(["migrate", try fixture("v4-rawkey.db"), "-o", raw, "--raw-key-file", dir.path("raw")])
        XCTAssertEqual(rawResult.status, 0, rawResult.stderr)
        let rawCheck = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", raw],
            input:
                "PRAGMA key = \"x'\(String(repeating: "0123456789abcdef", count: 4))'\";\nPRAGMA cipher_page_size = 4096;\nSELECT count(*) FROM msgs;\n"
        )
        XCTAssertEqual(rawCheck.stdout, "200\n", rawCheck.stderr)

        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: db))
        try handle.seek(toOffset: 20 * 4096 + 300)
        handle.write(Data([0xde, 0xad]))
        try handle.close()
        let damaged = try coffer(["migrate", db, "-o", dir.path("damaged-out.db"), "--passphrase-file", dir.path("pw4")])
        XCTAssertEqual(damaged.status, 1, damaged.stderr)
        XCTAssertTrue(damaged.stderr.contains("coffer repair"), damaged.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("damaged-out.db")))
    }
}
