import CofferTestSupport
import Foundation
import XCTest

/// The `coffer repair` command-line contract that outside scripts depend on.
final class RepairCommandTests: XCTestCase {
    private var dir: TemporaryDirectory!

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        dir = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        try "pw\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        try "wrong\n".write(toFile: dir.path("bad"), atomically: true, encoding: .utf8)
    }

    private func makeDatabase(encrypted: Bool) throws -> String {
        let path = dir.path(encrypted ? "enc.db" : "plain.db")
        let sql = """
            CREATE TABLE message(id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
              INSERT INTO message SELECT x, 'message body ' || x, x * 3 FROM c;
            CREATE INDEX message_n ON message(n);
            """
        let result =
            encrypted
            ? try Shell.sqlcipher(path, passphrase: "pw", sql)
            : try Shell.run("/usr/bin/sqlcipher", ["-batch", path], input: sql)
        XCTAssertEqual(result.status, 0, result.stderr)
        return path
    }

    private func repair(_ arguments: [String]) throws -> Shell.Result {
        try Shell.run(Shell.cofferExecutable, ["repair"] + arguments)
    }

    func testEncryptedRepairWritesEncryptedOutputAndReport() throws {
        let input = try makeDatabase(encrypted: true)
        try FileScan.zeroPage(input, page: 3)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))
        let output = dir.path("out.db")
        let report = dir.path("report.json")
        let result = try repair([input, "--output", output, "--passphrase-file", dir.path("pw"), "--report", report])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout.split(separator: "\n").count, 1, "one summary line on stdout")
        XCTAssertTrue(result.stdout.contains("rows salvaged"), result.stdout)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), before, "INPUT is never modified")

        let json = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        for field in [
            "pages_total", "pages_ok", "pages_bad_hmac", "pages_unparseable", "orphan_leaves_adopted",
            "overflow_chains_broken", "tables", "rows_salvaged", "rows_dropped", "seconds",
        ] {
            XCTAssertNotNil(json[field], "report lacks \(field)")
        }
        let salvaged = try XCTUnwrap(json["rows_salvaged"] as? Int)
        XCTAssertGreaterThan(salvaged, 2500)
        XCTAssertLessThan(salvaged, 3000, "a zeroed leaf's rows cannot come back")

        // OUTPUT is encrypted with the same passphrase, readable by the independent client, and whole.
        let check = try Shell.sqlcipher(output, passphrase: "pw", "SELECT count(*) FROM message; PRAGMA integrity_check;")
        XCTAssertEqual(check.stdout, "\(salvaged)\nok\n", check.stderr)
        XCTAssertFalse(FileScan.file(output, contains: "message body"))
        let plain = try Shell.run("/usr/bin/sqlcipher", ["-batch", output], input: "SELECT count(*) FROM message;")
        XCTAssertNotEqual(plain.status, 0, "OUTPUT must not open without the key")
    }

    func testPlaintextInputGivesPlaintextOutput() throws {
        let input = try makeDatabase(encrypted: false)
        let output = dir.path("plain-out.db")
        let result = try repair([input, "-o", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        let check = try Shell.run("/usr/bin/sqlcipher", ["-batch", output], input: "SELECT count(*), sum(n) FROM message;")
        XCTAssertEqual(check.stdout, "3000|13504500\n", check.stderr)
    }

    func testPlaintextOutputFlagDecryptsTheSalvage() throws {
        let input = try makeDatabase(encrypted: true)
        let output = dir.path("decrypted.db")
        let result = try repair([input, "-o", output, "--passphrase-file", dir.path("pw"), "--plaintext-output"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let check = try Shell.run("/usr/bin/sqlcipher", ["-batch", output], input: "SELECT count(*) FROM message;")
        XCTAssertEqual(check.stdout, "3000\n", check.stderr)
    }

    func testExitCodes() throws {
        let input = try makeDatabase(encrypted: true)
        // 3: wrong passphrase, named as such; no OUTPUT left behind.
        let wrong = try repair([input, "-o", dir.path("w.db"), "--passphrase-file", dir.path("bad")])
        XCTAssertEqual(wrong.status, 3)
        XCTAssertTrue(wrong.stderr.contains("wrong passphrase"), wrong.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("w.db")))
        // 2: OUTPUT exists, or bad usage.
        try Data("keep".utf8).write(to: URL(fileURLWithPath: dir.path("exists.db")))
        XCTAssertEqual(try repair([input, "-o", dir.path("exists.db"), "--passphrase-file", dir.path("pw")]).status, 2)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: dir.path("exists.db"))), Data("keep".utf8))
        XCTAssertEqual(try repair([input]).status, 2)
        XCTAssertEqual(try repair([input, "-o", dir.path("x.db"), "--page-size", "1000"]).status, 2)
        // 2: an encrypted file without a key.
        XCTAssertEqual(try repair([input, "-o", dir.path("nokey.db")]).status, 2)
        // 1: nothing at all salvageable: a plain SQLite header over pages of noise.
        let garbage = dir.path("garbage.db")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: try makeDatabase(encrypted: false)))
        for offset in 100..<bytes.count { bytes[offset] = UInt8(truncatingIfNeeded: offset &* 7919 >> 3) }
        try bytes.write(to: URL(fileURLWithPath: garbage))
        let nothing = try repair([garbage, "-o", dir.path("g.db")])
        XCTAssertEqual(nothing.status, 1, nothing.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: dir.path("g.db")))
    }

    func testDestroyedPageOneIsNotCalledAWrongKey() throws {
        let input = try makeDatabase(encrypted: true)
        // Everything of page 1 but its salt (bytes 0-15, which every page key depends on).
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: input))
        try handle.seek(toOffset: 16)
        try handle.write(contentsOf: Data(count: 4096 - 16))
        try handle.close()
        let output = dir.path("p1.db")
        let result = try repair([input, "-o", output, "--passphrase-file", dir.path("pw")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("page 1 damaged"), result.stdout)
    }

    func testDestroyedSaltIsReportedAsSuch() throws {
        let input = try makeDatabase(encrypted: true)
        try FileScan.zeroPage(input, page: 1)
        let result = try repair([input, "-o", dir.path("salt.db"), "--passphrase-file", dir.path("pw")])
        XCTAssertNotEqual(result.status, 0)
        XCTAssertTrue(result.stderr.contains("salt"), result.stderr)
    }

    // MARK: - --backup DIR (repair material)

    /// Two tables with a few leaves each, an index, and a full backup generation with its repair material.
    private func makeBackedUpDatabase() throws -> (input: String, backups: String) {
        let path = dir.path("backed.db")
        let result = try Shell.sqlcipher(
            path, passphrase: "pw",
            """
            CREATE TABLE message(id INTEGER PRIMARY KEY, body TEXT NOT NULL, n INTEGER);
            CREATE TABLE contact(id INTEGER PRIMARY KEY, name TEXT, score REAL);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
              INSERT INTO message SELECT x, 'message body ' || x, x * 3 FROM c;
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1500)
              INSERT INTO contact SELECT x, 'contact ' || x, x * 0.5 FROM c;
            CREATE INDEX message_n ON message(n);
            """)
        XCTAssertEqual(result.status, 0, result.stderr)
        let backups = dir.path("backups")
        let backup = try Shell.run(
            Shell.cofferExecutable, ["backup", path, "--to", backups, "--passphrase-file", dir.path("pw")])
        XCTAssertEqual(backup.status, 0, backup.stderr)
        return (path, backups)
    }

    /// Rows of `table` in `path` (encrypted with "pw"), via the sqlcipher shell.
    private func rows(_ path: String, _ sql: String) throws -> [String] {
        let result = try Shell.sqlcipher(path, passphrase: "pw", ".mode list\n" + sql)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout.split(separator: "\n").map(String.init)
    }

    func testBackupMaterialSuppliesADestroyedSalt() throws {
        let (input, backups) = try makeBackedUpDatabase()
        let truth = try rows(input, "SELECT id, body, n FROM message ORDER BY id;")
        XCTAssertEqual(truth.count, 3000)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: input))
        try handle.write(contentsOf: Data(count: 16))
        try handle.close()
        // Without the material nothing decrypts.
        XCTAssertNotEqual(try repair([input, "-o", dir.path("nosalt.db"), "--passphrase-file", dir.path("pw")]).status, 0)

        let output = dir.path("salt.db")
        let report = dir.path("salt.json")
        let result = try repair([
            input, "-o", output, "--passphrase-file", dir.path("pw"), "--backup", backups, "--report", report,
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try rows(output, "SELECT id, body, n FROM message ORDER BY id;"), truth)
        let json = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        XCTAssertEqual(json["salt_from_material"] as? Bool, true)
    }

    func testBackupMaterialAttributesLeavesWhenPageOneAndInteriorPagesAreGone() throws {
        let (input, backups) = try makeBackedUpDatabase()
        let messages = try rows(input, "SELECT id, body, n FROM message ORDER BY id;")
        let contacts = try rows(input, "SELECT id, name, score FROM contact ORDER BY id;")
        // Page 1 (all but its salt) and every table's root (interior pages: each table has several leaves).
        let roots = try rows(input, "SELECT rootpage FROM sqlite_master WHERE type = 'table' ORDER BY name;").compactMap {
            Int($0)
        }
        XCTAssertEqual(roots.count, 2)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: input))
        try handle.seek(toOffset: 16)
        try handle.write(contentsOf: Data(count: 4096 - 16))
        try handle.close()
        for root in roots { try FileScan.zeroPage(input, page: root) }

        let output = dir.path("material.db")
        let report = dir.path("material.json")
        let result = try repair([
            input, "-o", output, "--passphrase-file", dir.path("pw"), "--backup", backups, "--report", report,
        ])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            try rows(output, "SELECT id, body, n FROM message ORDER BY id;"), messages, "real table names and every row")
        XCTAssertEqual(try rows(output, "SELECT id, name, score FROM contact ORDER BY id;"), contacts)
        XCTAssertEqual(try rows(output, "SELECT count(*) FROM sqlite_master WHERE name LIKE 'recovered%';"), ["0"])
        let json = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: report))) as? [String: Any])
        XCTAssertEqual(json["schema_from_material"] as? Bool, true)
        XCTAssertGreaterThan(try XCTUnwrap(json["leaves_from_material"] as? Int), 10)
    }

    func testBackupDirectoryWithoutMaterialIsAnError() throws {
        let input = try makeDatabase(encrypted: true)
        try FileManager.default.createDirectory(atPath: dir.path("empty"), withIntermediateDirectories: true)
        let result = try repair([
            input, "-o", dir.path("x.db"), "--passphrase-file", dir.path("pw"), "--backup", dir.path("empty"),
        ])
        XCTAssertEqual(result.status, 1, result.stderr)
        XCTAssertTrue(result.stderr.contains("repair material"), result.stderr)
    }
}
