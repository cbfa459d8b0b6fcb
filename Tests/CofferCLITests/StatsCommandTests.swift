import CofferTestSupport
import Foundation
import XCTest

/// `coffer stats`: its counts agree with what the `sqlcipher` and `sqlite3` shells say of the same file,
/// and the file, its WAL and the directory holding them are exactly as they were (bytes and mtimes).
final class StatsCommandTests: XCTestCase {
    private func runStats(_ path: String, _ key: [String]) throws -> [String: Any] {
        let result = try Shell.run(Shell.cofferExecutable, ["stats", path, "--json"] + key)
        XCTAssertEqual(result.status, 0, result.stderr)
        return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    private func objects(_ stats: [String: Any]) throws -> [String: [String: Any]] {
        let list = try XCTUnwrap(stats["objects"] as? [[String: Any]])
        return Dictionary(uniqueKeysWithValues: list.map { ($0["name"] as? String ?? "?", $0) })
    }

    /// Every file of `directory` with its bytes and modification time.
    private func snapshot(_ directory: String) throws -> [String: String] {
        var result: [String: String] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            let path = directory + "/" + name
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let date = (attributes[.modificationDate] as? Date)?.timeIntervalSince1970 ?? 0
            result[name] = "\(try Data(contentsOf: URL(fileURLWithPath: path)).hashValue) \(date)"
        }
        return result
    }

    func testEncryptedFileCountsMatchTheShell() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.db")
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT);
            CREATE INDEX note_body ON note(body);
            CREATE TABLE blob(id INTEGER PRIMARY KEY, data BLOB);
            CREATE TABLE pair(a TEXT, b TEXT, PRIMARY KEY(a, b)) WITHOUT ROWID;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO note(body) SELECT printf('note number %d %s', i, hex(randomblob(20))) FROM n;
            INSERT INTO blob(data) VALUES (zeroblob(10000)), (randomblob(20000)), (x'01');
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500)
            INSERT INTO pair SELECT printf('a%d', i), printf('b%d', i) FROM n;
            DELETE FROM note WHERE id % 3 = 0;
            """)
        try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        let before = try snapshot(dir.path(""))
        let stats = try runStats(path, ["--passphrase-file", dir.path("pw")])
        XCTAssertEqual(try snapshot(dir.path("")), before, "stats changed the database's directory")

        let shell = try Shell.run(
            "sqlcipher", path,
            "PRAGMA key='pw';\nPRAGMA cipher_page_size=4096;\nPRAGMA page_count; PRAGMA freelist_count; SELECT count(*) FROM note; SELECT count(*) FROM pair;"
        )
        let numbers = shell.split(separator: "\n").compactMap { Int($0) }
        XCTAssertEqual(numbers.count, 4, shell)
        XCTAssertEqual(stats["page_count"] as? Int, numbers[0])
        XCTAssertEqual(stats["freelist_pages"] as? Int, numbers[1])
        XCTAssertGreaterThan(numbers[1], 0, "the delete freed pages")
        XCTAssertEqual(stats["page_size"] as? Int, 4096)
        XCTAssertEqual(stats["reserved_bytes"] as? Int, 48)
        XCTAssertEqual(stats["unclaimed_pages"] as? Int, 0)
        let byName = try objects(stats)
        XCTAssertEqual(byName["note"]?["rows"] as? Int, numbers[2])
        XCTAssertEqual(byName["note_body"]?["rows"] as? Int, numbers[2], "one index entry per row")
        XCTAssertEqual(byName["pair"]?["rows"] as? Int, numbers[3])
        XCTAssertEqual(byName["pair"]?["kind"] as? String, "table")
        XCTAssertEqual(byName["blob"]?["rows"] as? Int, 3)
        // 10000 and 20000 bytes spill: U = 4048, a table leaf keeps at most U−35 locally, chains of U−4.
        let overflow = try XCTUnwrap(byName["blob"]?["overflow_pages"] as? Int)
        XCTAssertEqual(overflow, 2 + 4, "overflow pages of a 10 kB and a 20 kB record")
        var pages = numbers[1]
        for (_, object) in byName {
            let objectPages = try XCTUnwrap(object["pages"] as? Int)
            XCTAssertEqual(object["bytes"] as? Int, objectPages * 4096)
            let fragmentation = try XCTUnwrap(object["fragmentation"] as? Double)
            XCTAssertTrue((0...1).contains(fragmentation))
            pages += objectPages
        }
        XCTAssertEqual(pages, numbers[0], "trees, chains and the freelist account for every page")
        let note = try XCTUnwrap(byName["note"])
        XCTAssertGreaterThan(note["unused_bytes"] as? Int ?? 0, 0, "deleting a third of the rows left room in leaves")
        XCTAssertEqual((stats["wal"] as? [String: Any])?["checkpoint_state"] as? String, "none")

        let text = try Shell.run(Shell.cofferExecutable, ["stats", path, "--passphrase-file", dir.path("pw")])
        XCTAssertEqual(text.status, 0, text.stderr)
        XCTAssertTrue(text.stdout.contains("note_body"), text.stdout)
        XCTAssertTrue(text.stdout.contains("free pages:    \(numbers[1]) on the freelist"), text.stdout)
    }

    /// A plaintext file copied with its `-wal` and `-shm` while a writer held it, commits pending: the rows
    /// in the WAL count, the checkpoint state comes from the `-shm`, and no file changes.
    func testPlaintextWALStateFromTheShm() throws {
        let dir = try TemporaryDirectory()
        let live = dir.path("live.db")
        try FileManager.default.createDirectory(atPath: dir.path("copy"), withIntermediateDirectories: true)
        let input = dir.path("copy/input.db")
        try Shell.run(
            "sqlite3", live,
            """
            PRAGMA page_size=4096; PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 400)
            INSERT INTO t(body) SELECT printf('row %d', i) FROM n;
            PRAGMA wal_checkpoint(PASSIVE);
            INSERT INTO t(body) VALUES ('only in the wal');
            .shell cp '\(live)' '\(input)'; cp '\(live)-wal' '\(input)-wal'; cp '\(live)-shm' '\(input)-shm'
            """)
        let before = try snapshot(dir.path("copy"))
        XCTAssertEqual(before.keys.sorted(), ["input.db", "input.db-shm", "input.db-wal"])
        let stats = try runStats(input, [])
        XCTAssertEqual(try snapshot(dir.path("copy")), before, "stats changed the database's directory")
        XCTAssertEqual(try objects(stats)["t"]?["rows"] as? Int, 401)
        let wal = try XCTUnwrap(stats["wal"] as? [String: Any])
        let committed = try XCTUnwrap(wal["committed_frames"] as? Int)
        XCTAssertGreaterThan(committed, 0)
        XCTAssertEqual(wal["shm_max_frame"] as? Int, committed)
        XCTAssertLessThan(try XCTUnwrap(wal["backfilled_frames"] as? Int), committed)
        XCTAssertEqual(wal["checkpoint_state"] as? String, "pending")
        XCTAssertEqual(wal["bytes"] as? Int, FileScan.size(input + "-wal"))

        // Without the -shm nothing says what was copied back.
        try FileManager.default.removeItem(atPath: input + "-shm")
        XCTAssertEqual((try runStats(input, [])["wal"] as? [String: Any])?["checkpoint_state"] as? String, "unknown")
    }
}
