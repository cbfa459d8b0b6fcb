import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The idle checkpoint empties the `-wal` file without costing the writer its page cache: a restart of the
/// WAL by any other connection changes the WAL-index header, and SQLite then empties the writer's whole
/// page cache at its next transaction, so every page it touches is read and decrypted again.
final class CheckpointIdleCacheTests: XCTestCase {
    /// An encrypted database whose idle checkpoint runs `idleDelay` seconds after the last commit, with a
    /// table of about 80 pages committed to its WAL.
    private func database(_ directory: TemporaryDirectory, idleDelay: TimeInterval) throws -> Database {
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.idleCheckpointDelay = idleDelay
        let database = try Database(path: directory.path("idle.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
            for id in 0..<300 {
                try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, String(repeating: "x", count: 1_000)])
            }
        }
        return database
    }

    /// Polls (bounded) until the `-wal` file is empty; the observable is the file size itself.
    private func waitForEmptyWAL(_ path: String, seconds: TimeInterval = 10) {
        let deadline = Date().addingTimeInterval(seconds)
        while FileScan.size(path + "-wal") > 0 && Date() < deadline { usleep(20_000) }
    }

    /// Reads every row on the writer and returns the page-cache misses of that read.
    private func missesReadingEverything(_ db: Connection) throws -> Int32 {
        var misses: Int32 = 0
        var highwater: Int32 = 0
        sqlite3_db_status(db.handle, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highwater, 1)
        XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT sum(length(body)) FROM item"), 300_000)
        sqlite3_db_status(db.handle, SQLITE_DBSTATUS_CACHE_MISS, &misses, &highwater, 1)
        return misses
    }

    func testIdleTruncationKeepsTheWritersPageCache() throws {
        let directory = try TemporaryDirectory()
        let database = try database(directory, idleDelay: 0.2)
        defer { try? database.close() }
        let path = directory.path("idle.db")
        XCTAssertGreaterThan(FileScan.size(path + "-wal"), 0)
        let versionBefore = try database.write { db in
            _ = try missesReadingEverything(db)
            return try db.fetchValue(Int.self, sql: "PRAGMA data_version")
        }
        waitForEmptyWAL(path)
        XCTAssertEqual(FileScan.size(path + "-wal"), 0, "the idle checkpoint truncates the WAL")
        // A page-cache reset moves the writer's data_version and makes the read miss every page (about 80).
        let (misses, versionAfter) = try database.write { db in
            (try missesReadingEverything(db), try db.fetchValue(Int.self, sql: "PRAGMA data_version"))
        }
        XCTAssertLessThanOrEqual(misses, 2, "the writer's page cache survived the idle truncation")
        XCTAssertEqual(versionAfter, versionBefore)
        // The rows are in the main file now: a new connection reads them all with an empty WAL.
        try database.close()
        let reopened = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        defer { try? reopened.close() }
        XCTAssertEqual(try reopened.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }, 300)
    }

    /// A reader still in the WAL when the database goes idle keeps the WAL from being restarted. The
    /// idle truncation then tries again, and empties the WAL once the reader is done.
    func testIdleTruncationRetriesAfterAReaderLeavesTheWAL() throws {
        let directory = try TemporaryDirectory()
        let database = try database(directory, idleDelay: 0.3)
        defer { try? database.close() }
        let path = directory.path("idle.db")
        let mainBefore = FileScan.size(path)
        let inside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let reader = Thread {
            _ = try? database.read { db -> Int? in
                let count = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM item")
                inside.signal()
                release.wait()
                return count
            }
        }
        reader.start()
        inside.wait()
        // The idle checkpoint's copy into the main file shows it has started while the reader holds the WAL.
        let deadline = Date().addingTimeInterval(10)
        while FileScan.size(path) <= mainBefore && Date() < deadline { usleep(20_000) }
        XCTAssertGreaterThan(FileScan.size(path), mainBefore, "the idle checkpoint copied the WAL back")
        // The truncation, queued on the writer right after that copy, does not wait for the reader (the
        // writer's busy timeout is 5 s): a use of the writer queued behind it comes back at once.
        let start = Date()
        try database.write { _ in }
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5)
        XCTAssertGreaterThan(FileScan.size(path + "-wal"), 0, "no restart while the reader is in the WAL")
        release.signal()
        // No commit follows: only the idle truncation's retry can empty the WAL now.
        waitForEmptyWAL(path)
        XCTAssertEqual(FileScan.size(path + "-wal"), 0, "the WAL is truncated once the reader has left")
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }, 300)
    }
}
