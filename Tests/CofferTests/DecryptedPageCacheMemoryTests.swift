import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// What Coffer's caches cost and give back: the defaults, `Database.releaseMemory()`, the decrypted-page
/// cache's cap at twice the open databases' sizes and its one budget for the whole process.
final class DecryptedPageCacheMemoryTests: XCTestCase {
    override func tearDown() {
        DecryptedPageCache.capacityKiB = 8 * 1024
        super.tearDown()
    }

    /// An encrypted database at `name` whose `item` table spans about 150 pages, checkpointed into the
    /// main file; no background checkpoint runs while a test works.
    private func filledDatabase(_ directory: TemporaryDirectory, _ name: String = "memory.db") throws -> Database {
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.checkpointThreshold = 100_000
        configuration.idleCheckpointDelay = 3_600
        let database = try Database(path: directory.path(name), configuration: configuration)
        try database.write { db in
            try db.executeScript("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE other(x);")
            for id in 0..<3_000 {
                try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, String(repeating: "x", count: 180)])
            }
        }
        try database.checkpoint(.truncate)
        return database
    }

    /// Reads every row twice, each time after a commit has made the readers' page caches stale: every
    /// page is then decrypted twice, so the decrypted-page cache admits it.
    private func readTwiceAcrossCommits(_ database: Database) throws {
        for _ in 0..<2 {
            try database.write { try $0.execute(sql: "INSERT INTO other VALUES (1)") }
            let count = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(body) FROM item") }
            XCTAssertEqual(count, 3_000)
        }
    }

    private func cacheUsed(_ connection: Connection) -> Int32 {
        var current: Int32 = 0
        var highwater: Int32 = 0
        sqlite3_db_status(connection.handle, SQLITE_DBSTATUS_CACHE_USED, &current, &highwater, 0)
        return current
    }

    func testTheDefaultsAreSizedForAPhone() throws {
        XCTAssertEqual(Configuration().cacheSizeKiB, 2048)
        XCTAssertEqual(DecryptedPageCache.capacityKiB, 8192)
        let directory = try TemporaryDirectory()
        let database = try Database(
            path: directory.path("defaults.db"), configuration: Configuration(encryption: .passphrase("pw")))
        defer { try? database.close() }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA cache_size") }, -2048)
        XCTAssertEqual(try database.write { try $0.fetchValue(Int.self, sql: "PRAGMA cache_size") }, -2048)
    }

    func testReleaseMemoryEmptiesTheDecryptedPageCacheAndTheConnectionsPageCaches() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(directory)
        defer { try? database.close() }
        try readTwiceAcrossCommits(database)
        let cached = DecryptedPageCache.usage
        XCTAssertGreaterThan(cached.pages, 100)
        // Ciphertext and plaintext of each page's encrypted part (4 KiB less SQLCipher's IV and MAC).
        XCTAssertGreaterThanOrEqual(cached.bytes, cached.pages * 2 * 4000)
        // One read at a time: the pool hands back the reader that just read.
        let readerBefore = try database.read { cacheUsed($0) }
        let writerBefore = try database.write { cacheUsed($0) }
        XCTAssertGreaterThan(readerBefore, 100 * 4096)

        database.releaseMemory()

        XCTAssertEqual(DecryptedPageCache.usage.pages, 0)
        XCTAssertEqual(DecryptedPageCache.usage.bytes, 0)
        let readerAfter = try database.read { cacheUsed($0) }
        XCTAssertLessThan(readerAfter, readerBefore / 4)
        XCTAssertLessThanOrEqual(try database.write { cacheUsed($0) }, writerBefore)
        // Still the same data, decrypted anew.
        try readTwiceAcrossCommits(database)
        XCTAssertGreaterThan(DecryptedPageCache.usage.pages, 100)
    }

    func testCachedPagesNeverExceedTwiceTheOpenDatabasesSize() throws {
        DecryptedPageCache.capacityKiB = 64 * 1024
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(directory)
        defer { try? database.close() }
        let path = directory.path("memory.db")
        func fileBytes() throws -> Int {
            try XCTUnwrap(try FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber).intValue
        }
        // Every round rewrites every row: about 150 new page versions, each read twice. Uncapped, the
        // cache would keep all 900 (7 MiB); twice the file is about 1.3 MiB.
        for round in 0..<6 {
            try database.write {
                try $0.execute(sql: "UPDATE item SET body = ?", arguments: [String(repeating: "\(round)", count: 180)])
            }
            try readTwiceAcrossCommits(database)
            try database.checkpoint(.truncate)
            // The cap counts every encrypted database open in the process (a test run may hold others).
            let limit = DecryptedPageCache.limitBytes
            XCTAssertLessThanOrEqual(DecryptedPageCache.usage.bytes, limit, "round \(round)")
            XCTAssertGreaterThanOrEqual(limit, 2 * (try fileBytes()), "round \(round)")
            XCTAssertLessThan(limit, 7 * 1024 * 1024, "round \(round): the cap must bind before the 900 versions")
        }
        XCTAssertGreaterThan(DecryptedPageCache.usage.pages, 50)
        XCTAssertEqual(
            try database.read { try $0.fetchValue(String.self, sql: "SELECT body FROM item WHERE id = 7") },
            String(repeating: "5", count: 180))
    }

    func testOneBudgetBoundsTwoDatabasesTogether() throws {
        // 2 MiB: 128 entries in 16 sets of 8; the two databases want about 300 pages.
        DecryptedPageCache.capacityKiB = 2 * 1024
        let directory = try TemporaryDirectory()
        let first = try filledDatabase(directory, "first.db")
        defer { try? first.close() }
        let second = try filledDatabase(directory, "second.db")
        defer { try? second.close() }
        try readTwiceAcrossCommits(first)
        let firstOnly = DecryptedPageCache.usage
        // About 150 pages over 16 sets of 8: a set's notes of first reads must outlast a pass over its
        // pages, or most sets admit none (about 40 pages in all, sometimes under 20).
        XCTAssertGreaterThan(firstOnly.pages, 60)
        try readTwiceAcrossCommits(second)
        let both = DecryptedPageCache.usage
        XCTAssertLessThanOrEqual(both.bytes, 2 * 1024 * 1024)
        XCTAssertLessThanOrEqual(both.pages, 128)
        XCTAssertGreaterThan(both.pages, firstOnly.pages)
    }

    func testReleasingMemoryWhileReadersAndAWriterRunLosesNothing() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(directory)
        defer { try? database.close() }
        let failures = FailureLog()
        DispatchQueue.concurrentPerform(iterations: 4) { worker in
            for round in 0..<15 {
                do {
                    switch worker {
                    case 0:
                        try database.write { try $0.execute(sql: "INSERT INTO other VALUES (?)", arguments: [round]) }
                    case 1:
                        database.releaseMemory()
                        DecryptedPageCache.purge()
                    default:
                        let count = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(body) FROM item") }
                        if count != 3_000 { failures.add("read \(String(describing: count)) rows") }
                    }
                } catch {
                    failures.add("\(error)")
                }
            }
        }
        XCTAssertEqual(failures.messages, [])
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM other") }, 15)
    }
}

private final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ message: String) { lock.withLock { list.append(message) } }
    var messages: [String] { lock.withLock { list } }
}
