import CofferTestSupport
import Foundation
import XCTest

/// `coffer verify` and `coffer info` read an input with no `-wal`, `-journal` or `-shm` beside it in place,
/// opened `immutable` instead of copied: on files the `sqlcipher` shell and Python's `sqlite3` wrote, in WAL and
/// rollback mode, in a directory whose name SQLite's URI parser would misread unescaped (`?`, `#`, `%`, a
/// space), it finds an index that disagrees with its table as the copy did, and the directory keeps exactly
/// its files and bytes (no `-wal` or `-shm` created, nothing checkpointed).
final class VerifyInPlaceTests: XCTestCase {
    private let fill = """
        CREATE TABLE t(a, b, body TEXT);
        CREATE INDEX i ON t(a);
        WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 1500)
        INSERT INTO t SELECT x, -x, printf('row %d %s', x, hex(randomblob(30))) FROM n;
        """
    /// Rewrites the index's definition: its entries stay those of column `a`, the definition says `b`.
    private let breakIndex = """
        PRAGMA writable_schema = ON;
        UPDATE sqlite_master SET sql = 'CREATE INDEX i ON t(b)' WHERE name = 'i';
        """

    private func snapshot(_ directory: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return result
    }

    /// The inputs, each with its key arguments: WAL mode encrypted (`sqlcipher` shell) and plaintext
    /// (Python), rollback mode encrypted and plaintext.
    private func makeInputs(in directory: String, pw: String, broken: Bool) throws -> [(path: String, key: [String])] {
        let extra = broken ? breakIndex : ""
        let walEncrypted = directory + "/wal encrypted.db"
        try Shell.sqlcipher(walEncrypted, key: "pw", "PRAGMA journal_mode = WAL;\n" + fill + extra)
        let walPlain = directory + "/wal plain.db"
        try Shell.python(walPlain, "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL;\n" + fill + extra)
        let rollbackEncrypted = directory + "/rollback encrypted.db"
        try Shell.sqlcipher(rollbackEncrypted, key: "pw", fill + extra)
        let rollbackPlain = directory + "/rollback plain.db"
        try Shell.run("sqlite3", rollbackPlain, "PRAGMA page_size = 4096;\n" + fill + extra)
        let key = ["--passphrase-file", pw]
        return [(walEncrypted, key), (walPlain, []), (rollbackEncrypted, key), (rollbackPlain, [])]
    }

    func testShellFilesAreCheckedInPlaceUntouchedInAnAwkwardDirectory() throws {
        let dir = try TemporaryDirectory()
        let pw = dir.path("pw")
        try "pw".write(toFile: pw, atomically: true, encoding: .utf8)
        for broken in [false, true] {
            let directory = dir.path(broken ? "broken ?#%25 dir" : "clean ?#%25 dir")
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            let inputs = try makeInputs(in: directory, pw: pw, broken: broken)
            let before = try snapshot(directory)
            // The shells left no side file: the in-place path is the one taken.
            XCTAssertEqual(before.keys.filter { $0.hasSuffix("-wal") || $0.hasSuffix("-shm") }, [])
            XCTAssertEqual(before.count, 4)
            for (path, key) in inputs {
                let label = "\(broken ? "broken" : "clean") \(URL(fileURLWithPath: path).lastPathComponent)"
                let full = try Shell.run(Shell.cofferExecutable, ["verify", path, "--json"] + key)
                XCTAssertEqual(full.status, broken ? 1 : 0, "\(label): \(full.stdout) \(full.stderr)")
                let report = try XCTUnwrap(
                    JSONSerialization.jsonObject(with: Data(full.stdout.utf8)) as? [String: Any], "\(label): \(full.stdout)")
                let errors = report["integrityErrors"] as? [String] ?? ["missing"]
                if broken {
                    XCTAssertTrue(errors.contains("row 1 missing from index i"), "\(label): \(errors.prefix(3))")
                } else {
                    XCTAssertEqual(errors, [], label)
                }
                let quick = try Shell.run(Shell.cofferExecutable, ["verify", path, "--quick"] + key)
                XCTAssertEqual(quick.status, 0, "\(label): \(quick.stdout) \(quick.stderr)")
                XCTAssertEqual(try snapshot(directory), before, "\(label): verify changed the input's directory")
            }
        }
    }

    /// `info` opened immutable: SQLite then says `delete` for every file, so the journal mode comes from
    /// the header (decrypted for an encrypted file); the tables and row counts are the file's.
    func testInfoReadsInPlaceAndNamesTheJournalModeFromTheHeader() throws {
        let dir = try TemporaryDirectory()
        let pw = dir.path("pw")
        try "pw".write(toFile: pw, atomically: true, encoding: .utf8)
        let directory = dir.path("info ?#%25 dir")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let inputs = try makeInputs(in: directory, pw: pw, broken: false)
        let before = try snapshot(directory)
        for (path, key) in inputs {
            let name = URL(fileURLWithPath: path).lastPathComponent
            let result = try Shell.run(Shell.cofferExecutable, ["info", path, "--json"] + key)
            XCTAssertEqual(result.status, 0, "\(name): \(result.stdout) \(result.stderr)")
            let info = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(name): \(result.stdout)")
            XCTAssertEqual(info["journal_mode"] as? String, name.hasPrefix("wal") ? "wal" : "delete", name)
            XCTAssertEqual(info["encrypted"] as? Bool, !key.isEmpty, name)
            let tables = info["tables"] as? [[String: Any]] ?? []
            XCTAssertEqual(tables.first?["name"] as? String, "t", name)
            XCTAssertEqual(tables.first?["rows"] as? Int, 1500, name)
            XCTAssertEqual(try snapshot(directory), before, "\(name): info changed the input's directory")
        }
    }
}
