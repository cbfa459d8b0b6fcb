import Coffer
import Foundation
import XCTest

final class StoreCatalogTests: XCTestCase {
    func testListExistsAndDropForBothKindsOfStore() throws {
        let database = try Database.temporary()
        let posts = try KeyValueStore(database: database, name: "posts", configuration: .init(indexes: [Post.likes]))
        let cache = try KeyValueStore(database: database, name: "cache \"quoted\".v1")
        let people = try DocumentStore(database: database, name: "people")
        _ = try DocumentStore(database: database, name: "kv:not-a-kv-store")
        try posts.put(Post(id: "1", publishedAt: Date(), likes: 5, author: "ada"), for: "1")
        try cache.put("x", for: "k")
        try people.put(["name": "Tom"], for: "tom")
        try people.add(["tom"], toBag: "b")

        XCTAssertEqual(try KeyValueStore.storeNames(in: database), ["cache \"quoted\".v1", "posts"])
        XCTAssertEqual(try DocumentStore.storeNames(in: database), ["kv:not-a-kv-store", "people"])
        XCTAssertTrue(try KeyValueStore.exists(named: "posts", in: database))
        XCTAssertFalse(try KeyValueStore.exists(named: "people", in: database))
        XCTAssertTrue(try DocumentStore.exists(named: "people", in: database))

        XCTAssertTrue(try KeyValueStore.drop(named: "cache \"quoted\".v1", in: database))
        XCTAssertFalse(try KeyValueStore.drop(named: "cache \"quoted\".v1", in: database))
        XCTAssertTrue(try DocumentStore.drop(named: "people", in: database))
        let leftovers = try database.read { db in
            try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE name LIKE '%people%' OR name LIKE '%quoted%'")
        }
        XCTAssertEqual(leftovers.count, 0, "tables, indexes and triggers all dropped")
        XCTAssertEqual(try KeyValueStore.storeNames(in: database), ["posts"])
        XCTAssertEqual(try DocumentStore.storeNames(in: database), ["kv:not-a-kv-store"])

        // The other store and its declared index field still work.
        let liked = try posts.keys(matching: KeyValueQuery(bucket: KeyValueStore.defaultBucket).filter(Post.likes > 1))
        XCTAssertEqual(liked, ["1"])
        // Re-opening a dropped store recreates it empty.
        XCTAssertEqual(try DocumentStore(database: database, name: "people").count(), 0)
        XCTAssertEqual(try KeyValueStore(database: database, name: "cache \"quoted\".v1").value(String.self, for: "k"), nil)
    }

    func testANameWithNULIsATypedError() throws {
        let database = try Database.temporary()
        XCTAssertThrowsError(try DocumentStore(database: database, name: "a\u{0}b")) { error in
            XCTAssertEqual((error as? DocumentError)?.reason, .invalidName)
        }
        XCTAssertThrowsError(try KeyValueStore.drop(named: "a\u{0}b", in: database))
    }
}
