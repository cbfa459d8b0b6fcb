import Foundation
import XCTest

@testable import Coffer

/// The SQL a query compiles to, and how SQLite runs it: paging a feed must not scan the store.
final class KeyValueQueryPlanTests: XCTestCase {
    func testFeedPagingCompilesToBoundSQLOverTheIndex() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "plan", configuration: .init(indexes: [Post.publishedAt]))
        let now = Date(timeIntervalSince1970: 1_000)
        let cutoff = Date(timeIntervalSince1970: 500)
        let query = KeyValueQuery(bucket: "feed").filter(Post.publishedAt < cutoff).order(by: Post.publishedAt.descending).limit(
            20)
        let statement = store.itemsStatement(query, now: now)
        XCTAssertEqual(
            statement.sql,
            """
            SELECT i.id, i.bucket, i.key, i.value, i.metadata, i.created_at, i.updated_at, i.expires_at, i.size \
            FROM "kv:plan" AS i JOIN "kv-index:plan" AS f0 ON f0.item_id = i.id AND f0.field = ? AND f0.bucket = ? \
            WHERE (i.expires_at IS NULL OR i.expires_at > ?) AND i.bucket = ? AND f0.value < ? \
            ORDER BY f0.value DESC, i.key, i.bucket LIMIT ? OFFSET ?
            """)
        XCTAssertEqual(statement.arguments, ["publishedAt", "feed", now, "feed", cutoff, 20, 0])

        let plan = try database.read { db in
            try db.fetchAll(sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { try $0.decode(String.self, named: "detail") }
        }
        XCTAssertTrue(plan.contains { $0.contains("kv-index-by-value:plan") }, "\(plan)")
        XCTAssertFalse(plan.contains { $0.hasPrefix("SCAN TABLE kv:plan") }, "\(plan)")
    }

    func testPrefixDeleteIsARangeOnTheKeyIndex() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "range")
        let range = KeyPrefixRange.condition("a%_\\")
        XCTAssertEqual(range.sql, "(key >= ? AND key < ?)")
        XCTAssertEqual(range.arguments, ["a%_\\", "a%_]"])
        XCTAssertEqual(KeyPrefixRange.upperBound(of: "a\u{D7FF}"), "a\u{E000}", "skips the surrogates")
        XCTAssertEqual(KeyPrefixRange.upperBound(of: "a\u{10FFFF}"), "b")
        XCTAssertNil(KeyPrefixRange.upperBound(of: ""))
        let sql = "EXPLAIN QUERY PLAN SELECT id FROM \(store.schema.items) WHERE bucket = ? AND \(range.sql)"
        let plan = try database.read { db in
            try db.fetchAll(sql: sql, arguments: ["b"] + range.arguments).map { try $0.decode(String.self, named: "detail") }
        }
        XCTAssertTrue(plan.contains { $0.hasPrefix("SEARCH") && $0.contains("(bucket=? AND key>? AND key<?)") }, "\(plan)")
    }
}
