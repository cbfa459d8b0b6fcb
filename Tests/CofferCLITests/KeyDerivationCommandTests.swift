import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Every `coffer` command finds Coffer's default key derivation (PBKDF2-HMAC-SHA512 256,000) on its own,
/// with nothing but the passphrase: info, verify, repair, migrate, backup and restore.
final class KeyDerivationCommandTests: XCTestCase {
    private var dir: TemporaryDirectory!
    private var database: String { dir.path("app.db") }

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        dir = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        try "app secret\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        let made = try Database(path: database, configuration: Configuration(encryption: .passphrase("app secret")))
        XCTAssertEqual(made.keyDerivation, .coffer)
        try made.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
            for index in 0..<300 { try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["note \(index)"]) }
        }
        try made.close()
    }

    private func coffer(_ arguments: [String]) throws -> Shell.Result {
        try Shell.run(Shell.cofferExecutable, arguments + ["--passphrase-file", dir.path("pw")])
    }

    /// The notes in `path`, opened with the default configuration; asserts the derivation it was found with.
    private func notes(at path: String, derivation: KeyDerivation = .coffer) throws -> Int? {
        let opened = try Database(path: path, configuration: Configuration(encryption: .passphrase("app secret")))
        defer { try? opened.close() }
        XCTAssertEqual(opened.keyDerivation, derivation)
        return try opened.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
    }

    func testInfoAndVerifyReadANewDefaultFile() throws {
        let info = try coffer(["info", database])
        XCTAssertEqual(info.status, 0, info.stderr)
        XCTAssertTrue(info.stdout.contains("pbkdf2-hmac-sha512 256000 iterations"), info.stdout)
        XCTAssertTrue(info.stdout.contains("note  300 rows"), info.stdout)
        let json = try coffer(["info", database, "--json"])
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let cipher = try XCTUnwrap(object["cipher"] as? [String: Any])
        XCTAssertEqual(cipher["kdf_algorithm"] as? String, "pbkdf2-hmac-sha512")
        XCTAssertEqual(cipher["kdf_iter"] as? Int, 256_000)
        let verify = try coffer(["verify", database])
        XCTAssertEqual(verify.status, 0, verify.stderr + verify.stdout)
        XCTAssertTrue(verify.stdout.contains("damaged pages:   none"), verify.stdout)
        let wrong = try Shell.run(
            Shell.cofferExecutable, ["verify", database, "--passphrase-env", "NOPE"], environment: ["NOPE": "x"])
        XCTAssertEqual(wrong.status, 3, wrong.stderr)
    }

    func testRepairAndMigrateKeepTheDerivation() throws {
        let repaired = dir.path("repaired.db")
        let repair = try coffer(["repair", database, "--output", repaired])
        XCTAssertEqual(repair.status, 0, repair.stderr)
        XCTAssertTrue(repair.stdout.contains("(coffer)"), repair.stdout)
        XCTAssertEqual(try notes(at: repaired), 300)
        let migrated = dir.path("migrated.db")
        let migrate = try coffer(["migrate", database, "--output", migrated, "--output-passphrase-file", dir.path("pw")])
        XCTAssertEqual(migrate.status, 0, migrate.stderr)
        XCTAssertEqual(try notes(at: migrated), 300)
    }

    func testBackupAndRestoreANewDefaultFile() throws {
        let backups = dir.path("backups")
        let backup = try coffer(["backup", database, "--to", backups])
        XCTAssertEqual(backup.status, 0, backup.stderr)
        let material = try RepairMaterial.load(directory: URL(fileURLWithPath: backups), encryption: .passphrase("app secret"))
        XCTAssertEqual(material.cipher?.kdfName, "pbkdf2-hmac-sha512")
        XCTAssertEqual(material.cipher?.kdfRounds, 256_000)
        let restored = dir.path("restored.db")
        let restore = try coffer(["restore", backups, "--to", restored])
        XCTAssertEqual(restore.status, 0, restore.stderr)
        XCTAssertEqual(try notes(at: restored), 300)
    }
}
