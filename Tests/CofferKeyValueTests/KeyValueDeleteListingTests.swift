import Coffer
import Foundation
import XCTest

final class KeyValueDeleteListingTests: XCTestCase {
    func testDeleteByKeyAndByKeyList() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "delete")
        for key in ["a", "b", "c", "d"] { try store.put(key, for: key) }
        try store.put("other bucket", for: "a", in: "x")
        XCTAssertTrue(try store.delete("a"))
        XCTAssertFalse(try store.delete("a"), "already gone")
        XCTAssertEqual(try store.delete(["b", "c", "nope"]), 2)
        XCTAssertEqual(try store.keys(), ["d"])
        XCTAssertEqual(try store.value(String.self, for: "a", in: "x"), "other bucket", "other buckets are untouched")
    }

    func testPrefixDeleteTreatsWildcardsAndBackslashLiterally() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "prefix")
        let keys = [
            "100%", "100%/a", "1000", "a_b", "a_b/c", "axb", "a\\b", "a\\b\\c", "a\\\\b",
            "User/1", "user/2", "user", "user/", "usex", "日本/1", "日本/2", "日本人", "\u{10FFFF}a", "\u{10FFFF}",
        ]
        for key in keys { try store.put(1, for: key) }

        XCTAssertEqual(try store.delete(keysWithPrefix: "100%"), 2, "% is not a wildcard")
        XCTAssertEqual(try store.delete(keysWithPrefix: "a_b"), 2, "_ is not a wildcard")
        XCTAssertEqual(try store.delete(keysWithPrefix: "a\\b"), 2, "\\ is not an escape")
        XCTAssertEqual(try store.delete(keysWithPrefix: "user/"), 2, "case-sensitive: User/1 stays")
        XCTAssertEqual(try store.delete(keysWithPrefix: "日本/"), 2)
        XCTAssertEqual(try store.delete(keysWithPrefix: "\u{10FFFF}"), 2, "a prefix with no successor")
        XCTAssertEqual(Set(try store.keys()), ["1000", "axb", "a\\\\b", "User/1", "user", "usex", "日本人"])
        XCTAssertEqual(try store.delete(keysWithPrefix: ""), 7, "the empty prefix matches everything")
    }

    func testClearBucketAndClearAll() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "clear")
        for index in 0..<5 {
            try store.put(index, for: "\(index)", in: "feed")
            try store.put(index, for: "\(index)")
        }
        XCTAssertEqual(try store.clear(bucket: "feed"), 5)
        XCTAssertEqual(try store.count(in: "feed"), 0)
        XCTAssertEqual(try store.count(), 5)
        XCTAssertEqual(try store.clearAll(), 5)
        XCTAssertEqual(try store.totalCount(), 0)
    }

    func testKeysAndItemsPageInKeyOrder() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "paging")
        let keys = (0..<25).map { String(format: "item-%02d", $0) }
        try store.batch { batch in
            for (offset, key) in keys.enumerated().reversed() { try batch.put(offset, for: key, in: "list") }
            try batch.put(99, for: "other", in: "list")
        }
        var collected: [String] = []
        var offset = 0
        while case let page = try store.keys(in: "list", prefix: "item-", limit: 10, offset: offset), !page.isEmpty {
            XCTAssertLessThanOrEqual(page.count, 10)
            collected += page
            offset += page.count
        }
        XCTAssertEqual(collected, keys)
        let secondPage = try store.items(Int.self, in: "list", prefix: "item-", limit: 10, offset: 10)
        XCTAssertEqual(secondPage.map(\.key), Array(keys[10..<20]))
        XCTAssertEqual(secondPage.map(\.value), Array(10..<20))
        XCTAssertEqual(try store.count(in: "list"), 26)
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: "list").keys(withPrefix: "item-")), 25)
        XCTAssertEqual(
            try store.keys(matching: KeyValueQuery(bucket: "list").order(by: .keyDescending).limit(2)),
            ["other", "item-24"])
    }
}
