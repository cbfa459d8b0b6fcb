import Coffer
import Foundation
import XCTest

final class KeyValueEvictionTests: XCTestCase {
    func testMaxItemCountEvictsTheOldestWritten() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "fifo",
            configuration: .init(maxItemCount: 3, evictionPolicy: .oldest, now: clock.function))
        for key in ["a", "b", "c"] {
            try store.put(key, for: key)
            clock.advance(by: 1)
        }
        _ = try store.value(String.self, for: "a")  // reads do not matter for FIFO
        try store.put("a2", for: "a")  // rewriting makes "a" the newest
        clock.advance(by: 1)
        try store.put("d", for: "d")
        XCTAssertEqual(try store.keys(), ["a", "c", "d"], "b was the least recently written")
        try store.batch { batch in
            for key in ["e", "f", "g", "h"] { try batch.put(key, for: key) }
        }
        XCTAssertEqual(try store.totalCount(), 3)
        XCTAssertNil(try store.value(String.self, for: "a"), "evicted items leave the cache too")
    }

    func testLeastRecentlyUsedKeepsWhatWasRead() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "lru",
            configuration: .init(maxItemCount: 3, evictionPolicy: .leastRecentlyUsed, now: clock.function))
        for key in ["a", "b", "c"] {
            try store.put(key, for: key)
            clock.advance(by: 1)
        }
        XCTAssertEqual(try store.value(String.self, for: "a"), "a")  // from the database
        clock.advance(by: 1)
        XCTAssertEqual(try store.value(String.self, for: "b"), "b")
        clock.advance(by: 1)
        XCTAssertEqual(try store.value(String.self, for: "a"), "a")  // from the cache: still an access
        clock.advance(by: 1)
        try store.put("d", for: "d")
        XCTAssertEqual(try store.keys(), ["a", "b", "d"], "c was used least recently")
        clock.advance(by: 1)
        try store.put("e", for: "e")
        XCTAssertEqual(try store.keys(), ["a", "d", "e"], "then b, read before a's second read")
    }

    func testMaxByteCountEvictsUntilUnderTheCap() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "bytes",
            configuration: .init(maxByteCount: 1_000, now: clock.function))
        for index in 0..<4 {
            try store.put(Data(repeating: UInt8(index), count: 300), for: "blob-\(index)")
            clock.advance(by: 1)
        }
        XCTAssertEqual(try store.keys(), ["blob-1", "blob-2", "blob-3"])
        XCTAssertEqual(try store.usage().bytes, 900)
        try store.put(Data(repeating: 9, count: 500), for: "big", metadata: Data(repeating: 1, count: 100))
        XCTAssertEqual(try store.keys(), ["big", "blob-3"], "metadata counts toward the cap")
        XCTAssertEqual(try store.usage().bytes, 900)
    }

    func testCapsPreferExpiredItems() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "expired-first",
            configuration: .init(maxItemCount: 2, purgeInterval: 3600, now: clock.function))
        try store.put(1, for: "old-live")  // also starts the purge interval, which never comes due here
        clock.advance(by: 1)
        try store.put(2, for: "young-expiring", expiry: .after(1))
        clock.advance(by: 1)
        try store.put(3, for: "new")
        XCTAssertEqual(try store.keys(), ["new", "old-live"])
    }
}
