import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `vacuum(progress:)` and `incrementalVacuum`: everything survives (rows, rowids, indexes, views,
/// triggers, FTS4, AUTOINCREMENT, user_version), free pages go, the same `Database` keeps working, the copy
/// is ciphertext while it is being written, and the `sqlcipher` shell reads the result.
final class DatabaseVacuumTests: XCTestCase {
    private let marker = "VACUUMPLAINTEXTMARKER"

    private func configuration() -> Configuration {
        var configuration = Configuration(encryption: .passphrase("vacuum pw"))
        configuration.cipher.keyDerivation = .pbkdf2SHA1(rounds: 2)
        return configuration
    }

    private func fingerprint(_ database: Database) throws -> [String] {
        try database.read { db in
            [
                "SELECT count(*), sum(id), sum(length(body)) FROM note",
                "SELECT count(*), sum(v) FROM pair",
                "SELECT count(*) FROM doc WHERE doc MATCH 'ab*'",
                "SELECT count(*) FROM recent",
                "SELECT group_concat(name || ':' || seq) FROM sqlite_sequence",
                "SELECT group_concat(type || ' ' || name, ', ') FROM (SELECT * FROM sqlite_master ORDER BY name)",
                "PRAGMA user_version",
            ].map { sql in
                (try? db.fetchOne(sql: sql)).flatMap { $0 }.map { "\($0)" } ?? "nil"
            }
        }
    }

    private func fill(_ database: Database) throws {
        try database.write { db in
            try db.executeScript(
                """
                CREATE TABLE note(id INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT);
                CREATE INDEX note_body ON note(body);
                CREATE TABLE pair(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
                CREATE TABLE plain(x, y);
                CREATE VIEW recent AS SELECT * FROM note WHERE id > 100;
                CREATE TRIGGER note_added AFTER INSERT ON note BEGIN INSERT INTO plain VALUES (new.id, 'trigger'); END;
                CREATE VIRTUAL TABLE doc USING fts4(text);
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 6000)
                INSERT INTO note(body) SELECT printf('%s %d %s', '\(marker)', i, hex(randomblob(40))) FROM n;
                INSERT INTO pair SELECT body, id FROM note WHERE id % 3 = 0;
                INSERT INTO doc SELECT lower(hex(randomblob(8))) FROM note WHERE id < 500;
                DELETE FROM note WHERE id % 2 = 0 OR id > 4000;
                DELETE FROM plain WHERE rowid % 5 <> 0;
                PRAGMA user_version = 42;
                """)
        }
    }

    func testVacuumKeepsEverythingAndFreesPages() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.db")
        let database = try Database(path: path, configuration: configuration())
        defer { try? database.close() }
        try fill(database)
        let before = try fingerprint(database)
        let freeBefore = try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") } ?? 0
        XCTAssertGreaterThan(freeBefore, 50)
        var steps: [VacuumProgress] = []
        var copyWasCiphertext = true
        let report = try database.vacuum(batchRows: 200) { progress in
            steps.append(progress)
            // The copy in progress is as encrypted as the database.
            if FileScan.file(path + "-vacuum", contains: self.marker) { copyWasCiphertext = false }
        }
        XCTAssertTrue(copyWasCiphertext, "the -vacuum file held plaintext")
        XCTAssertEqual(report.freePagesBefore, freeBefore)
        XCTAssertLessThan(report.pagesAfter, report.pagesBefore - freeBefore / 2)
        XCTAssertEqual(steps.filter { $0.step == "note" }.count, 10, "2000 rows copied 200 at a time")
        XCTAssertEqual(steps.last?.step, "replace")
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-vacuum"))

        XCTAssertEqual(try fingerprint(database), before)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") }, 0)
        XCTAssertEqual(try database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        // The same Database writes on (AUTOINCREMENT continues, the trigger fires) and reads what it wrote.
        try database.write { try $0.execute(sql: "INSERT INTO note(body) VALUES ('after')") }
        XCTAssertEqual(
            try database.read { try $0.fetchValue(Int.self, sql: "SELECT id FROM note WHERE body = 'after'") }, 6001)
        XCTAssertEqual(try database.read { try $0.fetchValue(String.self, sql: "PRAGMA journal_mode") }, "wal")
        try database.close()
        XCTAssertFalse(FileScan.file(path, contains: marker))

        // An independent reader: the sqlcipher shell with the same passphrase and settings.
        let shell = try Shell.sqlcipher(
            path, passphrase: "vacuum pw", "PRAGMA kdf_iter = 2;\nPRAGMA integrity_check;\nSELECT count(*) FROM note;")
        XCTAssertEqual(shell.stdout.split(separator: "\n").suffix(2), ["ok", "2001"], shell.stderr)
    }

    func testVacuumOfAPlaintextDatabase() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("plain.db"))
        defer { try? database.close() }
        try fill(database)
        let before = try fingerprint(database)
        let report = try database.vacuum()
        XCTAssertEqual(try fingerprint(database), before)
        XCTAssertLessThan(report.pagesAfter, report.pagesBefore)
    }

    func testIncrementalVacuumReleasesFreePagesInSteps() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("incremental.db")
        try Shell.run(
            "sqlite3", path,
            """
            PRAGMA auto_vacuum = INCREMENTAL;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO t(body) SELECT randomblob(300) FROM n;
            DELETE FROM t WHERE id > 1000;
            """)
        let database = try Database(path: path)
        defer { try? database.close() }
        let free = try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") } ?? 0
        XCTAssertGreaterThan(free, 100)
        var reports: [(Int, Int)] = []
        let freed = try database.incrementalVacuum(stepPages: 40) { reports.append(($0, $1)) }
        XCTAssertEqual(freed, free)
        XCTAssertEqual(reports.count, (free + 39) / 40)
        XCTAssertEqual(reports.last?.0, free)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") }, 0)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 1000)

        let other = try Database(path: dir.path("full.db"))
        defer { try? other.close() }
        XCTAssertThrowsError(try other.incrementalVacuum()) { error in
            XCTAssertEqual((error as? CofferError)?.code.primary, .invalidConfiguration)
        }
    }
}
