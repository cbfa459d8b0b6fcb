import Coffer
import Foundation
import XCTest

final class KeyValueBatchAsyncTests: XCTestCase {
    func testABatchOfManyWritesIsOneTransaction() throws {
        let fixture = try EncryptedFixture()
        let store = try KeyValueStore(database: fixture.database, name: "bulk")
        try store.batch { batch in
            for index in 0..<1_000 { try batch.put(User(id: index, name: "u\(index)"), for: "\(index)") }
        }
        let removed = try store.batch { batch -> Int in
            try batch.put("meta", for: "info", in: "meta", metadata: Download(etag: "e", downloadedAt: Date()))
            let listed = try batch.delete(["0", "1", "2"])
            let prefixed = try batch.delete(keysWithPrefix: "99")  // 99, 990…999
            XCTAssertTrue(try batch.delete("500"))
            return listed + prefixed
        }
        XCTAssertEqual(removed, 14)
        XCTAssertEqual(try store.count(), 985)
        XCTAssertEqual(try store.item(String.self, for: "info", in: "meta")?.hasMetadata, true)
        try store.batch { XCTAssertEqual(try $0.clear(bucket: "meta"), 1) }
        XCTAssertEqual(try store.buckets(), ["default"])
    }

    func testAnEncodingFailureRollsBackTheWholeBatch() throws {
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "atomic", configuration: .init(coder: FailingCoder()))
        try store.put(User(id: 0, name: "kept"), for: "existing")
        XCTAssertThrowsError(
            try store.batch { batch in
                try batch.put(User(id: 1, name: "fine"), for: "new")
                try batch.delete("existing")
                try batch.put(User(id: 2, name: "unencodable"), for: "bad")
            }
        ) { error in
            XCTAssertEqual((error as? KeyValueError)?.key, "bad")
        }
        XCTAssertEqual(try store.keys(), ["existing"])
    }

    func testEveryCallHasAnAsyncTwin() async throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "async",
            configuration: .init(indexes: [Post.likes], now: clock.function))
        let post = Post(id: "a", publishedAt: clock.now, likes: 3, author: "ada")
        try await store.put(post, for: "a")
        try await store.put(Post(id: "b", publishedAt: clock.now, likes: 5, author: "bob"), for: "b", metadata: "etag")
        try await store.put(1, for: "p/1")
        try await store.put(2, for: "p/2", in: "other")

        let value = try await store.value(Post.self, for: "a")
        XCTAssertEqual(value, post)
        let item = try await store.item(Post.self, for: "b")
        XCTAssertEqual(try item?.metadata(as: String.self), "etag")
        let contains = try await store.contains("a")
        XCTAssertTrue(contains)
        let keys = try await store.keys()
        XCTAssertEqual(keys, ["a", "b", "p/1"])
        let items = try await store.items(Int.self, prefix: "p/")
        XCTAssertEqual(items.map(\.value), [1])
        let count = try await store.count()
        let total = try await store.totalCount()
        XCTAssertEqual([count, total], [3, 4])
        let buckets = try await store.buckets()
        XCTAssertEqual(buckets, ["default", "other"])
        let usage = try await store.usage()
        XCTAssertEqual(usage.items, 4)

        let query = KeyValueQuery().filter(Post.likes > 0).order(by: Post.likes.descending)
        let matched = try await store.items(Post.self, matching: query)
        XCTAssertEqual(matched.map(\.key), ["b", "a"])
        let matchedKeys = try await store.keys(matching: query)
        let matchedCount = try await store.count(matching: query)
        XCTAssertEqual(matchedKeys, ["b", "a"])
        XCTAssertEqual(matchedCount, 2)
        let sum = try await store.sum(of: Post.likes, matching: query)
        let average = try await store.average(of: Post.likes, matching: query)
        let minimum = try await store.minimum(of: Post.likes, matching: query)
        let maximum = try await store.maximum(of: Post.likes, matching: query)
        let fieldCount = try await store.count(of: Post.likes, matching: query)
        XCTAssertEqual(sum, 8)
        XCTAssertEqual(average, 4)
        XCTAssertEqual(minimum, 3)
        XCTAssertEqual(maximum, 5)
        XCTAssertEqual(fieldCount, 2)

        let written = try await store.batch { batch in
            try batch.put(3, for: "p/3")
            return try batch.delete("p/1")
        }
        XCTAssertTrue(written)
        let deletedOne = try await store.delete("a")
        let deletedList = try await store.delete(["b", "nope"])
        let deletedPrefix = try await store.delete(keysWithPrefix: "p/")
        XCTAssertEqual([deletedOne ? 1 : 0, deletedList, deletedPrefix], [1, 1, 1])
        try await store.put(9, for: "z")
        let cleared = try await store.clear(bucket: "other")
        let clearedAll = try await store.clearAll()
        XCTAssertEqual([cleared, clearedAll], [1, 1])
    }
}
