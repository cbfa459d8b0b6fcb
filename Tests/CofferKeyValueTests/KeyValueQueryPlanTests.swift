import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

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
            FROM "kv-index:plan" AS f0 CROSS JOIN "kv:plan" AS i ON f0.item_id = i.id AND f0.field = ? AND f0.bucket = ? \
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

    /// Every shape the query API builds reads the value index first, then items by rowid: never the
    /// whole bucket through `(bucket, key)` with one index probe per item.
    func testDeclaredFieldQueriesSearchTheValueIndexFirst() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "the expected EXPLAIN QUERY PLAN text is SQLite 3.15's (SEARCH TABLE name …); SQLite 3.49 writes SEARCH alias …, SCALAR SUBQUERY for the same plans"
            ))
        let database = try Database.temporary()
        let store = try KeyValueStore(
            database: database, name: "plan", configuration: .init(indexes: [Post.publishedAt, Post.likes, Post.author]))
        let now = Date(timeIntervalSince1970: 1_000)
        let feed = KeyValueQuery(bucket: "feed")
        let shapes: [(String, KeyValueQuery, String)] = [
            ("equality", feed.filter(Post.author == "ada"), "value=?"),
            ("in", feed.filter(Post.author.isIn(["ada", "bob"])), "value=?"),
            ("between", feed.filter(Post.likes.isBetween(3, and: 9)), "value>? AND value<?"),
            ("range", feed.filter(Post.likes >= 3).limit(5, offset: 2), "value>?"),
            ("and", feed.filter(Post.author == "ada").filter(Post.likes < 3), "value=?"),
            ("and, != first", feed.filter(Post.likes != 3).filter(Post.author == "ada"), "value=?"),
            ("ordered", feed.filter(Post.likes > 3).order(by: Post.publishedAt.descending).limit(20), "value>?"),
            ("by key", feed.filter(Post.likes > 3).order(by: .keyDescending), "value>?"),
            ("ordering only", feed.order(by: Post.publishedAt.descending).limit(20), ""),
            ("all buckets", KeyValueQuery(bucket: nil).filter(Post.author == "ada"), ""),
        ]
        for (name, query, range) in shapes {
            let bucket = query.bucket == nil ? "field=?" : "field=? AND bucket=?"
            let expected = range.isEmpty ? "(\(bucket)" : "(\(bucket) AND \(range))"
            let items = try plan(of: store.itemsStatement(query, now: now), in: database)
            let count = try plan(of: CompiledQuery(query, schema: store.schema, now: now).select("count(*)"), in: database)
            let sum = try plan(of: store.aggregateStatement(.sum, of: "likes", matching: query, now: now), in: database)
            for (kind, plan) in [("items", items), ("count", count), ("sum", sum)] {
                let first = try XCTUnwrap(plan.first, name)
                XCTAssertTrue(
                    first.hasPrefix("SEARCH TABLE kv-index:plan AS f0 USING COVERING INDEX kv-index-by-value:plan"),
                    "\(name) \(kind): \(plan)")
                XCTAssertTrue(first.contains(expected), "\(name) \(kind): \(plan)")
                XCTAssertTrue(
                    plan.contains("SEARCH TABLE kv:plan AS i USING INTEGER PRIMARY KEY (rowid=?)"), "\(name) \(kind): \(plan)")
                XCTAssertFalse(plan.contains { $0.contains("autoindex") || $0.hasPrefix("SCAN") }, "\(name) \(kind): \(plan)")
            }
        }
        let sumOverBucket = try plan(of: store.aggregateStatement(.sum, of: "likes", matching: feed, now: now), in: database)
        XCTAssertEqual(
            sumOverBucket.first,
            "SEARCH TABLE kv-index:plan AS f0 USING COVERING INDEX kv-index-by-value:plan (field=? AND bucket=?)")
    }

    private func plan(of statement: (sql: String, arguments: StatementArguments), in database: Database) throws -> [String] {
        try database.read { db in
            try db.fetchAll(sql: "EXPLAIN QUERY PLAN " + statement.sql, arguments: statement.arguments)
                .map { try $0.decode(String.self, named: "detail") }
        }
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
