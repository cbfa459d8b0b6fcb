import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `DecryptedPageCache`: readers find the pages a commit left alone without decrypting them again, and
/// the cache never answers for bytes it has not seen — a tampered page, a wrong key, a connection
/// opened outside Coffer all go through SQLCipher's own checks.
final class DecryptedPageCacheTests: XCTestCase {
    override func tearDown() {
        DecryptedPageCache.capacityKiB = 8 * 1024
        super.tearDown()
    }

    /// A database whose `item` table spans about 150 pages, checkpointed into the main file.
    private func filledDatabase(in directory: TemporaryDirectory, cipher: CipherOptions = CipherOptions()) throws -> Database {
        let database = try Database(
            path: directory.path("cached.db"), configuration: Configuration(encryption: .passphrase("pw"), cipher: cipher))
        try database.write { db in
            try db.executeScript("CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT); CREATE TABLE other(x);")
            for id in 0..<3_000 {
                try db.execute(
                    sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, "body \(id) " + String(repeating: "x", count: 180)])
            }
        }
        try database.checkpoint(.truncate)
        return database
    }

    /// Makes every reader's SQLite page cache stale: a commit to a table the reads do not touch.
    private func commitElsewhere(_ database: Database) throws {
        try database.write { try $0.execute(sql: "INSERT INTO other VALUES (1)") }
    }

    /// Reads every row twice with a commit before each read, so the cache has admitted every page.
    private func readTwiceAcrossCommits(_ database: Database) throws {
        for _ in 0..<2 {
            try commitElsewhere(database)
            _ = try readAll(database)
        }
    }

    func testAPageIsCachedTheSecondTimeItIsDecryptedAndServedFromThenOn() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory)
        defer { try? database.close() }
        var counts = DecryptedPageCache.counts
        func decryptionsSinceLastCall() -> (hits: Int, misses: Int) {
            let now = DecryptedPageCache.counts
            defer { counts = now }
            return (now.hits - counts.hits, now.misses - counts.misses)
        }
        let first = try readAll(database)
        XCTAssertEqual(first.count, 3_000)
        // About 150 pages, each decrypted for the first time: noted, not copied.
        let firstRead = decryptionsSinceLastCall()
        XCTAssertEqual(firstRead.hits, 0)
        XCTAssertGreaterThan(firstRead.misses, 100)

        // Each commit empties the reader's own cache, so every page is read and decrypted again.
        try commitElsewhere(database)
        XCTAssertEqual(try readAll(database), first)
        // Only pages read twice before (page 1, the schema) come from the cache yet.
        let secondRead = decryptionsSinceLastCall()
        XCTAssertLessThan(secondRead.hits, 5)
        XCTAssertGreaterThan(secondRead.misses, 100)

        try commitElsewhere(database)
        XCTAssertEqual(try readAll(database), first)
        let thirdRead = decryptionsSinceLastCall()
        XCTAssertGreaterThan(thirdRead.hits, 100)
        XCTAssertLessThan(thirdRead.misses, 10)
    }

    func testWithoutPageMACsTheCacheStillAnswersOnlyForIdenticalPages() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory, cipher: CipherOptions(usesHMAC: false))
        defer { try? database.close() }
        let expected = try readAll(database)
        try readTwiceAcrossCommits(database)
        // A commit that rewrites every `item` page: none of the cached page versions may answer.
        try database.write { try $0.execute(sql: "UPDATE item SET body = upper(body)") }
        let before = DecryptedPageCache.counts
        XCTAssertEqual(try readAll(database), expected.map { $0.uppercased() })
        XCTAssertLessThan(DecryptedPageCache.counts.hits - before.hits, 5)
    }

    func testTwoCopiesOfOneFileShareCachedPagesUntilTheyDiverge() throws {
        let directory = try TemporaryDirectory()
        let original = try filledDatabase(in: directory)
        defer { try? original.close() }
        let expected = try readAll(original)
        try readTwiceAcrossCommits(original)
        try original.checkpoint(.truncate)
        try FileManager.default.copyItem(atPath: directory.path("cached.db"), toPath: directory.path("copy.db"))
        let copy = try Database(path: directory.path("copy.db"), configuration: Configuration(encryption: .passphrase("pw")))
        defer { try? copy.close() }
        // The copy's pages are byte for byte the original's: the cache answers for them.
        let before = DecryptedPageCache.counts
        XCTAssertEqual(try readAll(copy), expected)
        XCTAssertGreaterThan(DecryptedPageCache.counts.hits - before.hits, 100)

        try copy.write { try $0.execute(sql: "UPDATE item SET body = 'changed' WHERE id % 2 = 0") }
        for _ in 0..<2 {
            try commitElsewhere(original)
            XCTAssertEqual(try readAll(original), expected)
            XCTAssertEqual(try readAll(copy), expected.enumerated().map { $0.offset % 2 == 0 ? "changed" : $0.element })
        }
    }

    func testATamperedPageIsAuthenticatedAgainAndFails() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory)
        defer { try? database.close() }
        try readTwiceAcrossCommits(database)
        // Flip one ciphertext byte of page 10 (a leaf of `item`) in the main file; its IV and MAC stay.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: directory.path("cached.db")))
        let offset = UInt64(9 * 4096 + 200)
        try handle.seek(toOffset: offset)
        let byte = try XCTUnwrap(handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: offset)
        handle.write(Data([byte ^ 0x01]))
        try handle.close()
        try commitElsewhere(database)
        XCTAssertThrowsError(try readAll(database)) { error in
            XCTAssertTrue((error as? CofferError)?.isCorruption == true, "\(error)")
        }
    }

    func testAWrongPassphraseStillFailsWhileTheRightOneIsCached() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory)
        defer { try? database.close() }
        try readTwiceAcrossCommits(database)
        XCTAssertThrowsError(
            try Database(path: directory.path("cached.db"), configuration: Configuration(encryption: .passphrase("not pw")))
        ) { error in
            guard case CofferError.wrongPassphrase = error else { return XCTFail("expected wrongPassphrase, got \(error)") }
        }
    }

    func testConnectionsOpenedOutsideCofferDoNotUseTheCache() throws {
        let directory = try TemporaryDirectory()
        // SQLCipher 3's derivation, so that the C side below opens it with the passphrase.
        let database = try filledDatabase(in: directory, cipher: CipherOptions(keyDerivation: .sqlcipher3))
        defer { try? database.close() }
        try readTwiceAcrossCommits(database)
        var handle: OpaquePointer?
        XCTAssertEqual(sqlite3_open(directory.path("cached.db"), &handle), SQLITE_OK)
        defer { sqlite3_close(handle) }
        // SQLCipher 3's default page size is 1024; Coffer's is 4096. SQLCipher 4 reads SQLCipher 3's format
        // with cipher_compatibility = 3.
        let compatibility = TestedSQLCipher.isVersion4 ? " PRAGMA cipher_compatibility = 3;" : ""
        XCTAssertEqual(
            sqlite3_exec(handle, "PRAGMA key = 'pw';\(compatibility) PRAGMA cipher_page_size = 4096;", nil, nil, nil), SQLITE_OK)
        let before = DecryptedPageCache.counts
        XCTAssertEqual(sqlite3_exec(handle, "SELECT sum(length(body)) FROM item", nil, nil, nil), SQLITE_OK)
        // The raw read decrypted about 150 pages the cache holds: none of them came from it or went
        // through it. (A few misses are tolerated: another test's database may still be closing.)
        let after = DecryptedPageCache.counts
        XCTAssertEqual(after.hits, before.hits)
        XCTAssertLessThan(after.misses - before.misses, 20)
    }

    private static let wipeVariable = "COFFER_PAGE_CACHE_WIPE_CHILD"

    /// The child's side of the next test, alone in its process (no other test's connection open): the
    /// cache fills, a connection keyed outside Coffer opens and reads, the database closes — the cache is
    /// empty while that connection stays open.
    func testHelperWipesTheCacheWhenTheLastCofferConnectionCloses() throws {
        guard ProcessInfo.processInfo.environment[Self.wipeVariable] != nil else { return }
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory, cipher: CipherOptions(keyDerivation: .sqlcipher3))
        try readTwiceAcrossCommits(database)
        let filled = DecryptedPageCache.usage.pages
        var handle: OpaquePointer?
        guard sqlite3_open(directory.path("cached.db"), &handle) == SQLITE_OK else { return print("open failed") }
        defer { sqlite3_close(handle) }
        let compatibility = TestedSQLCipher.isVersion4 ? " PRAGMA cipher_compatibility = 3;" : ""
        let script = "PRAGMA key = 'pw';\(compatibility) PRAGMA cipher_page_size = 4096; SELECT count(*) FROM item;"
        guard sqlite3_exec(handle, script, nil, nil, nil) == SQLITE_OK else { return print("raw read failed") }
        try database.close()
        print("filled \(filled) after \(DecryptedPageCache.usage.pages)")
    }

    /// The plaintext the cache holds is wiped when the last connection Coffer keyed closes, even while a
    /// connection keyed another way stays open (on SQLCipher 3.4.1 that connection's contexts come from the
    /// same provider, which stays installed, but only Coffer's count).
    func testTheCacheIsWipedWhenTheLastCofferConnectionCloses() throws {
        #if os(Linux)
        let run = try Shell.run(
            CommandLine.arguments[0],
            ["CofferTests.DecryptedPageCacheTests/testHelperWipesTheCacheWhenTheLastCofferConnectionCloses"],
            environment: [Self.wipeVariable: "1", "LLVM_PROFILE_FILE": "/dev/null"])
        let line = run.stdout.split(separator: "\n").first { $0.hasPrefix("filled ") }.map(String.init)
        let numbers = try XCTUnwrap(line, run.stdout + run.stderr).split(separator: " ").compactMap { Int($0) }
        XCTAssertEqual(numbers.count, 2)
        XCTAssertGreaterThan(numbers.first ?? 0, 100, "the cache held the database's pages")
        XCTAssertEqual(numbers.last, 0, "the cache was not wiped")
        #else
        throw XCTSkip("the child process is the xctest binary on Linux")
        #endif
    }

    func testZeroCapacityTurnsTheCacheOffAndPurgeForgetsEveryPage() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory)
        defer { try? database.close() }
        let expected = try readAll(database)
        try readTwiceAcrossCommits(database)

        DecryptedPageCache.purge()
        try commitElsewhere(database)
        var before = DecryptedPageCache.counts
        XCTAssertEqual(try readAll(database), expected)
        var after = DecryptedPageCache.counts
        XCTAssertEqual(after.hits, before.hits, "a purged cache answered")
        XCTAssertGreaterThan(after.misses - before.misses, 100)

        DecryptedPageCache.capacityKiB = 0
        XCTAssertEqual(DecryptedPageCache.capacityKiB, 0)
        try commitElsewhere(database)
        before = DecryptedPageCache.counts
        XCTAssertEqual(try readAll(database), expected)
        after = DecryptedPageCache.counts
        XCTAssertEqual(after.hits, before.hits)
        XCTAssertEqual(after.misses, before.misses, "a cache without capacity was consulted")
    }

    func testTheSharedCacheReadsCorrectlyUnderConcurrentCommits() throws {
        let directory = try TemporaryDirectory()
        let database = try filledDatabase(in: directory)
        defer { try? database.close() }
        let expected = try readAll(database)
        let failures = LockedCount()
        DispatchQueue.concurrentPerform(iterations: 3) { worker in
            for round in 0..<20 {
                do {
                    if worker == 0 {
                        try database.write { db in
                            try db.execute(sql: "UPDATE item SET body = body WHERE id = ?", arguments: [round * 100])
                            try db.execute(sql: "INSERT INTO other VALUES (?)", arguments: [round])
                        }
                    } else if try readAll(database) != expected {
                        failures.add()
                    }
                } catch {
                    failures.add()
                }
            }
        }
        XCTAssertEqual(failures.value, 0)
    }
}

/// Every `item` body, in id order.
private func readAll(_ database: Database) throws -> [String] {
    try database.read { db in try db.fetchAll(sql: "SELECT body FROM item ORDER BY id").map { try $0.decode(String.self, at: 0) }
    }
}

/// A counter several threads add to.
private final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
