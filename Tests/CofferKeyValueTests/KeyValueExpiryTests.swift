import Coffer
import Foundation
import XCTest

final class KeyValueExpiryTests: XCTestCase {
    func testItemExpiryIsInvisibleToEveryReadAtOnce() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "ttl", configuration: .init(purgeInterval: nil, now: clock.function))
        try store.put(User(id: 1, name: "short"), for: "short", expiry: .after(10))
        try store.put(User(id: 2, name: "dated"), for: "dated", expiry: .at(clock.now + 20))
        try store.put(User(id: 3, name: "forever"), for: "forever")

        XCTAssertEqual(try store.value(User.self, for: "short")?.name, "short")  // now cached
        XCTAssertEqual(try store.item(User.self, for: "dated")?.expiresAt, clock.now + 20)
        clock.advance(by: 10)
        XCTAssertNil(try store.value(User.self, for: "short"), "expired exactly at its deadline, even from the cache")
        XCTAssertNil(try store.item(User.self, for: "short"))
        XCTAssertFalse(try store.contains("short"))
        XCTAssertEqual(try store.keys(), ["dated", "forever"])
        XCTAssertEqual(try store.count(), 2)
        XCTAssertEqual(try store.usage().items, 2)

        clock.advance(by: 10)
        XCTAssertEqual(try store.items(User.self).map(\.key), ["forever"])
        XCTAssertEqual(try store.buckets(), ["default"])

        let rawCount = { try store.database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM \"kv:ttl\"") } }
        XCTAssertEqual(try rawCount(), 3, "expired rows stay until purged")
        XCTAssertEqual(try store.purgeExpired(), 2)
        XCTAssertEqual(try rawCount(), 1)
    }

    func testStoreDefaultTimeToLiveAndOverrides() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "default-ttl",
            configuration: .init(defaultTimeToLive: 60, now: clock.function))
        try store.put(1, for: "default")
        try store.put(2, for: "never", expiry: .never)
        try store.put(3, for: "longer", expiry: .after(120))
        XCTAssertEqual(try store.item(Int.self, for: "default")?.expiresAt, clock.now + 60)
        clock.advance(by: 60)
        XCTAssertNil(try store.value(Int.self, for: "default"))
        XCTAssertEqual(try store.value(Int.self, for: "never"), 2)
        XCTAssertEqual(try store.value(Int.self, for: "longer"), 3)
        try store.put(4, for: "default")  // re-put restarts the lifetime
        clock.advance(by: 59)
        XCTAssertEqual(try store.value(Int.self, for: "default"), 4)
    }

    func testWritesPurgeExpiredItemsEveryPurgeInterval() throws {
        let clock = TestClock()
        let database = try Database.temporary()
        let store = try KeyValueStore(
            database: database, name: "auto-purge", configuration: .init(purgeInterval: 100, now: clock.function))
        let rawCount = { try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM \"kv:auto-purge\"") } }
        try store.put(1, for: "a", expiry: .after(5))  // first write: purges (nothing) and starts the interval
        clock.advance(by: 10)
        try store.put(2, for: "b")
        XCTAssertEqual(try rawCount(), 2, "within the interval, no purge")
        clock.advance(by: 100)
        try store.put(3, for: "c")
        XCTAssertEqual(try rawCount(), 2, "the interval passed: the write purged the expired item")
        XCTAssertEqual(try store.keys(), ["b", "c"])
    }

    func testPurgesDrivenByATickSequence() async throws {
        let clock = TestClock()
        let database = try Database.temporary()
        let store = try KeyValueStore(
            database: database, name: "ticks", configuration: .init(purgeInterval: nil, now: clock.function))
        try await store.put(1, for: "a", expiry: .after(1))
        try await store.put(2, for: "b")
        clock.advance(by: 1)
        let (ticks, tick) = AsyncStream.makeStream(of: Void.self)
        tick.yield()
        tick.finish()
        await store.purgeExpired(on: ticks)  // returns once every tick has been handled
        let remaining = try await database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM \"kv:ticks\"") }
        XCTAssertEqual(remaining, 1)
    }

    func testBackgroundPurgingStopsWhenCancelled() async throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "background")
        let task = store.startPurgingExpired(every: 3600)
        task.cancel()
        await task.value  // ends promptly: cancellation interrupts the wait
    }

    func testAsyncPurge() async throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "async-purge", configuration: .init(purgeInterval: nil, now: clock.function)
        )
        try await store.put(1, for: "a", expiry: .after(1))
        clock.advance(by: 1)
        let purged = try await store.purgeExpired()
        XCTAssertEqual(purged, 1)
    }
}
