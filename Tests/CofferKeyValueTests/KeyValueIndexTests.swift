import Coffer
import Foundation
import XCTest

final class KeyValueIndexTests: XCTestCase {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func makeFeed(_ clock: TestClock = TestClock()) throws -> KeyValueStore {
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "posts",
            configuration: .init(indexes: [Post.publishedAt, Post.likes, Post.author], now: clock.function))
        try store.batch { batch in
            for index in 0..<50 {
                let post = Post(
                    id: "p\(index)", publishedAt: start + Double(index) * 60, likes: index % 10,
                    author: index.isMultiple(of: 2) ? "ada" : "bob")
                try batch.put(post, for: post.id, in: "feed")
            }
            try batch.put(Post(id: "x", publishedAt: start, likes: 1000, author: "ada"), for: "x", in: "drafts")
        }
        return store
    }

    func testTheTwentyNewestBeforeATime() throws {
        let store = try makeFeed()
        let cutoff = start + 30 * 60  // p30's time: strictly before it means p29 downwards
        let query = KeyValueQuery(bucket: "feed")
            .filter(Post.publishedAt < cutoff)
            .order(by: Post.publishedAt.descending)
            .limit(20)
        let page = try store.items(Post.self, matching: query)
        XCTAssertEqual(page.map(\.key), (10...29).reversed().map { "p\($0)" })
        // The next page starts before the last item of this one (keyset paging).
        let last = try XCTUnwrap(page.last?.value.publishedAt)
        let next = try store.keys(
            matching: KeyValueQuery(bucket: "feed")
                .filter(Post.publishedAt < last).order(by: Post.publishedAt.descending).limit(20))
        XCTAssertEqual(next, (0...9).reversed().map { "p\($0)" })
        XCTAssertEqual(try store.count(matching: query), 30, "count ignores the page")
    }

    func testFiltersCombineAndSortBySeveralFields() throws {
        let store = try makeFeed()
        let query = KeyValueQuery(bucket: "feed")
            .filter(Post.author == "bob")
            .filter(Post.likes >= 7)
            .order(by: Post.likes.descending)
            .order(by: Post.publishedAt.ascending)
        let keys = try store.keys(matching: query)
        XCTAssertEqual(keys, ["p9", "p19", "p29", "p39", "p49", "p7", "p17", "p27", "p37", "p47"])
        XCTAssertEqual(
            try store.keys(
                matching: KeyValueQuery(bucket: "feed").filter(Post.likes.isIn([0])).order(by: Post.publishedAt.ascending)),
            ["p0", "p10", "p20", "p30", "p40"])
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: "feed").filter(Post.likes.isBetween(2, and: 3))), 10)
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: "feed").filter(Post.author != "ada")), 25)
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: "feed").filter(Post.likes.isIn([]))), 0)
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: nil).filter(Post.author == "ada")), 26, "all buckets")
    }

    func testAggregatesOverAnIndexedField() throws {
        let store = try makeFeed()
        let feed = KeyValueQuery(bucket: "feed")
        XCTAssertEqual(try store.sum(of: Post.likes, matching: feed), 225)  // 5 × (0+…+9)
        XCTAssertEqual(try store.average(of: Post.likes, matching: feed), 4.5)
        XCTAssertEqual(try store.minimum(of: Post.publishedAt, matching: feed), start)
        XCTAssertEqual(try store.maximum(of: Post.publishedAt, matching: feed), start + 49 * 60)
        XCTAssertEqual(try store.maximum(of: Post.likes, matching: feed.filter(Post.author == "ada")), 8)
        XCTAssertEqual(try store.count(of: Post.likes, matching: feed), 50)
        let empty = KeyValueQuery(bucket: "nothing")
        XCTAssertEqual(try store.sum(of: Post.likes, matching: empty), 0)
        XCTAssertNil(try store.average(of: Post.likes, matching: empty))
        XCTAssertNil(try store.minimum(of: Post.likes, matching: empty))
    }

    func testIndexFollowsRewritesDeletesAndExpiry() throws {
        let clock = TestClock()
        let store = try makeFeed(clock)
        let popular = KeyValueQuery(bucket: "feed").filter(Post.likes >= 100)
        XCTAssertEqual(try store.keys(matching: popular), [])
        try store.put(Post(id: "p1", publishedAt: start, likes: 500, author: "bob"), for: "p1", in: "feed")
        XCTAssertEqual(try store.keys(matching: popular), ["p1"], "a re-put rewrites the index rows")
        try store.put(Post(id: "p1", publishedAt: start, likes: 5, author: "bob"), for: "p1", in: "feed")
        XCTAssertEqual(try store.keys(matching: popular), [])

        try store.put(Post(id: "t", publishedAt: start, likes: 200, author: "c"), for: "t", in: "feed", expiry: .after(5))
        XCTAssertEqual(try store.keys(matching: popular), ["t"])
        clock.advance(by: 5)
        XCTAssertEqual(try store.keys(matching: popular), [], "expired items never match")
        XCTAssertEqual(try store.purgeExpired(), 1)

        XCTAssertEqual(try store.delete(keysWithPrefix: "p4", in: "feed"), 11)  // p4, p40…p49
        XCTAssertEqual(try store.count(of: Post.likes, matching: KeyValueQuery(bucket: "feed")), 39)
        try store.clearAll()
        let orphans = try store.database.read { db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \"kv-index:posts\"")
        }
        XCTAssertEqual(orphans, 0, "the delete trigger keeps no index row without its item")
    }

    func testOnlyValuesOfTheFieldsRootTypeAreIndexed() throws {
        let store = try makeFeed()
        try store.put("just a string", for: "s", in: "feed")
        try store.put(User(id: 1, name: "ada"), for: "u", in: "feed")
        XCTAssertEqual(try store.count(in: "feed"), 52)
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: "feed").filter(Post.author == "ada")), 25)
        XCTAssertEqual(
            try store.count(matching: KeyValueQuery(bucket: "feed").order(by: Post.likes.ascending)), 50,
            "sorting on a field skips items without it")
    }

    func testAFailedBatchLeavesTheIndexUntouched() throws {
        let store = try makeFeed()
        struct Abort: Error {}
        XCTAssertThrowsError(
            try store.batch { batch in
                try batch.put(Post(id: "p0", publishedAt: start, likes: 999, author: "z"), for: "p0", in: "feed")
                try batch.delete("p1", in: "feed")
                throw Abort()
            })
        XCTAssertEqual(try store.count(matching: KeyValueQuery(bucket: "feed").filter(Post.author == "z")), 0)
        XCTAssertEqual(try store.count(of: Post.likes, matching: KeyValueQuery(bucket: "feed")), 50)
    }
}

final class KeyValueReindexTests: XCTestCase {
    func testAddingAnIndexFieldToAnExistingStore() async throws {
        let database = try Database.temporary()
        let before = try KeyValueStore(database: database, name: "grow", configuration: .init(indexes: [Post.author]))
        let start = Date(timeIntervalSince1970: 0)
        try await before.batch { batch in
            for index in 0..<10 {
                try batch.put(Post(id: "\(index)", publishedAt: start, likes: index, author: "a"), for: "\(index)")
            }
            try batch.put("not a post", for: "text")
        }
        let after = try KeyValueStore(database: database, name: "grow", configuration: .init(indexes: [Post.author, Post.likes]))
        let popular = KeyValueQuery().filter(Post.likes >= 5)
        let beforeRebuild = try await after.count(matching: popular)
        XCTAssertEqual(beforeRebuild, 0, "old items have no rows for the new field yet")
        let rebuilt = try await after.rebuildIndexes(decodingAs: Post.self)
        XCTAssertEqual(rebuilt, 10, "the string item is skipped")
        let afterRebuild = try await after.count(matching: popular)
        XCTAssertEqual(afterRebuild, 5)
        let authors = try await after.count(matching: KeyValueQuery().filter(Post.author == "a"))
        XCTAssertEqual(authors, 10, "existing fields are rewritten, not duplicated")
    }
}
