import Foundation
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

final class KeyValueCacheTests: XCTestCase {
    /// Changes a stored value behind the store's back — through a second `Database` on the file, whose
    /// commits the store's database does not look for (its `externalChangeLatency` is 0) — so a read
    /// shows whether it came from the cache.
    private func overwriteBehindTheStore(_ store: KeyValueStore, key: String, with user: User) throws {
        let sql = "UPDATE \(SQLIdentifier.quote("kv:" + store.name)) SET value = ? WHERE key = ?"
        let bytes = try JSONEncoder().encode(user)
        let other = try Database(
            path: store.database.path, configuration: Configuration(encryption: store.database.unredactedEncryption))
        try other.write { db in try db.execute(sql: sql, arguments: [bytes, key]) }
        try other.close()
    }

    func testRepeatedReadsAreServedFromMemory() throws {
        var configuration = Configuration()
        configuration.externalChangeLatency = 0
        let store = try KeyValueStore(database: try Database.temporary(configuration: configuration), name: "cached")
        try store.put(User(id: 1, name: "original"), for: "u")
        XCTAssertEqual(try store.value(User.self, for: "u")?.name, "original")
        try overwriteBehindTheStore(store, key: "u", with: User(id: 1, name: "changed"))
        XCTAssertEqual(try store.value(User.self, for: "u")?.name, "original", "served from the cache")
        store.invalidateCache()
        XCTAssertEqual(try store.value(User.self, for: "u")?.name, "changed")
    }

    func testEveryWriteThroughTheStoreInvalidates() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "invalidate")
        func cache(_ key: String, _ name: String) throws {
            try store.put(User(id: 0, name: name), for: key)
            XCTAssertEqual(try store.value(User.self, for: key)?.name, name)
        }
        try cache("k", "one")
        try store.put(User(id: 0, name: "two"), for: "k")
        XCTAssertEqual(try store.value(User.self, for: "k")?.name, "two", "put")
        try store.put(User(id: 0, name: "three"), for: "k", metadata: "m")
        XCTAssertEqual(try store.value(User.self, for: "k")?.name, "three", "put with metadata")
        try store.delete("k")
        XCTAssertNil(try store.value(User.self, for: "k"), "delete")
        try cache("k", "four")
        try store.delete(["k"])
        XCTAssertNil(try store.value(User.self, for: "k"), "delete list")
        try cache("p/k", "five")
        try store.delete(keysWithPrefix: "p/")
        XCTAssertNil(try store.value(User.self, for: "p/k"), "delete prefix")
        try cache("k", "six")
        try store.clear(bucket: KeyValueStore.defaultBucket)
        XCTAssertNil(try store.value(User.self, for: "k"), "clear bucket")
        try cache("k", "seven")
        try store.clearAll()
        XCTAssertNil(try store.value(User.self, for: "k"), "clear all")
        try cache("k", "eight")
        try store.batch { try $0.put(User(id: 0, name: "nine"), for: "k") }
        XCTAssertEqual(try store.value(User.self, for: "k")?.name, "nine", "batch")
        try store.batch { try $0.delete("k") }
        XCTAssertNil(try store.value(User.self, for: "k"), "batch delete")
    }

    func testAFailedBatchLeavesNoStaleEntry() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "rollback")
        try store.put(1, for: "k")
        XCTAssertEqual(try store.value(Int.self, for: "k"), 1)
        struct Abort: Error {}
        XCTAssertThrowsError(
            try store.batch { batch in
                try batch.put(2, for: "k")
                throw Abort()
            })
        XCTAssertEqual(try store.value(Int.self, for: "k"), 1)
    }

    func testTheCacheIsCostBoundedAndLeastRecentlyUsedGoesFirst() {
        let cache = DecodedObjectCache(costLimit: 100)
        let key = { (name: String) in DecodedObjectCache.Key(bucket: "b", key: name) }
        let now = Date()
        for name in ["a", "b", "c"] {
            cache.insert(name, cost: 30, expiresAt: nil, for: key(name), ifGeneration: cache.generation)
        }
        XCTAssertEqual(cache.value(for: key("a"), now: now) as? String, "a")  // a becomes most recent
        cache.insert("d", cost: 30, expiresAt: nil, for: key("d"), ifGeneration: cache.generation)
        XCTAssertEqual(cache.count, 3)
        XCTAssertNil(cache.value(for: key("b"), now: now), "b was least recently used")
        XCTAssertNotNil(cache.value(for: key("a"), now: now))
        cache.insert("huge", cost: 101, expiresAt: nil, for: key("huge"), ifGeneration: cache.generation)
        XCTAssertNil(cache.value(for: key("huge"), now: now), "a value over the whole budget is not cached")
        XCTAssertEqual(cache.count, 3)
    }

    func testAnInsertFromBeforeAWriteIsRefused() {
        let cache = DecodedObjectCache(costLimit: 100)
        let key = DecodedObjectCache.Key(bucket: "b", key: "k")
        let generation = cache.generation  // a reader starts its snapshot…
        cache.invalidate(CacheInvalidation(keys: [key]))  // …a write commits…
        cache.insert("stale", cost: 1, expiresAt: nil, for: key, ifGeneration: generation)
        XCTAssertNil(cache.value(for: key, now: Date()), "…and the reader's old value is not cached")
    }

    // The race ThreadSanitizer's timing exposed once in CI: reader R (snapshot after a commit) inserted the
    // new value, then reader S (snapshot before it) replaced it with the old one, both before the writer
    // announced its commit — and R's next read went back in time.
    func testReadersOnEitherSideOfAnUnannouncedCommitCannotInsert() {
        let cache = DecodedObjectCache(costLimit: 100)
        let key = DecodedObjectCache.Key(bucket: "b", key: "counter")
        let beforeWrite = cache.generation  // S notes its generation and reads 177…
        cache.beginWrite()  // …the write of 178 starts and commits…
        let duringWrite = cache.generation  // …R notes its generation and reads 178.
        cache.insert(178, cost: 1, expiresAt: nil, for: key, ifGeneration: duringWrite)
        cache.insert(177, cost: 1, expiresAt: nil, for: key, ifGeneration: beforeWrite)
        XCTAssertNil(cache.value(for: key, now: Date()), "nothing is cached while the write is under way")
        cache.endWrite(CacheInvalidation(keys: [key]))
        cache.insert(177, cost: 1, expiresAt: nil, for: key, ifGeneration: beforeWrite)
        cache.insert(178, cost: 1, expiresAt: nil, for: key, ifGeneration: duringWrite)
        XCTAssertNil(cache.value(for: key, now: Date()), "generations noted before the write ended are stale")
        cache.insert(178, cost: 1, expiresAt: nil, for: key, ifGeneration: cache.generation)
        XCTAssertEqual(cache.value(for: key, now: Date()) as? Int, 178)
    }

    func testConcurrentReadersNeverKeepAValueOlderThanTheLastWrite() async throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "race")
        try await store.put(0, for: "counter")
        let writes = 200
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for value in 1...writes { try await store.put(value, for: "counter") }
            }
            for _ in 0..<4 {
                group.addTask {
                    var last = 0
                    while last < writes {
                        let value = try await store.value(Int.self, for: "counter") ?? -1
                        XCTAssertGreaterThanOrEqual(value, last, "a reader never goes back in time")
                        last = value
                        // A cache hit returns without suspending: yield so the writer's task gets a thread.
                        await Task.yield()
                    }
                }
            }
            try await group.waitForAll()
        }
        let final = try await store.value(Int.self, for: "counter")
        XCTAssertEqual(final, writes)
    }

    func testACachedReadIsMuchCheaperThanADatabaseRead() throws {
        let database = try Database.temporary()
        let cached = try KeyValueStore(database: database, name: "fast")
        let uncached = try KeyValueStore(database: database, name: "slow", configuration: .init(cacheCostLimit: 0))
        let user = User(id: 1, name: "Ada", tags: Array(repeating: "tag", count: 20))
        try cached.put(user, for: "u")
        try uncached.put(user, for: "u")
        let reads = 2_000
        func time(_ store: KeyValueStore) throws -> TimeInterval {
            _ = try store.value(User.self, for: "u")
            let start = Date()
            for _ in 0..<reads { _ = try store.value(User.self, for: "u") }
            return Date().timeIntervalSince(start)
        }
        let fast = try time(cached)
        let slow = try time(uncached)
        print("KeyValue cache: \(reads) cached reads \(fast)s, database reads \(slow)s (×\(Int(slow / max(fast, 1e-9))))")
        XCTAssertLessThan(fast * 5, slow, "cached \(fast)s vs database \(slow)s for \(reads) reads")
    }
}

final class KeyValueSharedCacheTests: XCTestCase {
    func testInstancesOfOneStoreShareTheirCache() throws {
        let database = try Database.temporary()
        let first = try KeyValueStore(database: database, name: "shared")
        let second = try KeyValueStore(database: database, name: "shared")
        let other = try KeyValueStore(database: database, name: "other")
        try first.put(1, for: "k")
        XCTAssertEqual(try first.value(Int.self, for: "k"), 1)  // cached
        try second.put(2, for: "k")
        XCTAssertEqual(
            try first.value(Int.self, for: "k"), 2, "a write through the second instance invalidated the first's cache")
        try other.put(3, for: "k")
        XCTAssertEqual(try first.value(Int.self, for: "k"), 2)
        XCTAssertTrue(first.cache === second.cache)
        XCTAssertFalse(first.cache === other.cache)
        XCTAssertFalse(
            first.cache === (try KeyValueStore(database: try Database.temporary(), name: "shared")).cache,
            "another database has its own")
    }
}
