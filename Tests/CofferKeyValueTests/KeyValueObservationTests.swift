import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Observing a key, a bucket and a whole store, and the decoded-object cache following commits made by
/// raw SQL and by another process.
final class KeyValueObservationTests: XCTestCase {
    struct Profile: Codable, Sendable, Equatable {
        var name: String
    }

    func testObservesAKeyABucketAndTheStore() async throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "profiles")
        try await store.put(Profile(name: "Ada"), for: "1")
        var iterator = store.observe(Profile.self, for: "1").makeAsyncIterator()
        var keys = store.observeKeys(in: "team").makeAsyncIterator()
        var all = store.observeAllKeys().makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first, Profile(name: "Ada"))
        let firstKeys = try await keys.next()
        XCTAssertEqual(firstKeys, [])
        let firstAll = try await all.next()
        XCTAssertEqual(firstAll, ["default": ["1"]])

        try await store.put(Profile(name: "Grace"), for: "2", in: "team")  // not key 1: no new value for it
        try await store.put(Profile(name: "Ada L."), for: "1")
        let second = try await iterator.next()
        XCTAssertEqual(second, Profile(name: "Ada L."))
        let secondKeys = try await keys.next()
        XCTAssertEqual(secondKeys, ["2"])
        var allKeys = try await all.next()
        while allKeys != ["default": ["1"], "team": ["2"]] { allKeys = try await all.next() }
        try await store.delete("1")
        let deleted = try await iterator.next()
        XCTAssertEqual(deleted, .some(nil))
    }

    func testCacheFollowsRawSQLCommits() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "profiles")
        try store.put(Profile(name: "Ada"), for: "1")
        XCTAssertEqual(try store.value(Profile.self, for: "1"), Profile(name: "Ada"))  // now cached
        try database.write { db in
            try db.execute(
                sql: "UPDATE \"kv:profiles\" SET value = ? WHERE key = '1'",
                arguments: [Data(#"{"name":"Changed"}"#.utf8)])
        }
        // The change set is handled on the writer's queue before `write` returns: no wait needed.
        XCTAssertEqual(try store.value(Profile.self, for: "1"), Profile(name: "Changed"))
    }

    func testCacheFollowsAnotherProcessesCommits() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("kv.db")
        var configuration = Coffer.Configuration(encryption: .passphrase("kv observed"))
        configuration.externalChangeLatency = 0.02
        let database = try Database(path: path, configuration: configuration)
        let store = try KeyValueStore(database: database, name: "profiles")
        try await store.put(Profile(name: "Ada"), for: "1")
        let cached = try await store.value(Profile.self, for: "1")
        XCTAssertEqual(cached, Profile(name: "Ada"))
        var observed = store.observe(Profile.self, for: "1").makeAsyncIterator()
        let first = try await observed.next()
        XCTAssertEqual(first, Profile(name: "Ada"))
        let key = try ShellRawKey.spec(passphrase: "kv observed", path: path)
        try Shell.run(
            "sqlcipher", path,
            """
            PRAGMA key = "\(key)";
            PRAGMA cipher_page_size = \(database.configuration.cipher.pageSize);
            UPDATE "kv:profiles" SET value = CAST('{"name":"Shell"}' AS BLOB) WHERE key = '1';
            """)
        // The store's cache hears of the commit before any observation registered after it.
        let seen = try await observed.next()
        XCTAssertEqual(seen, Profile(name: "Shell"))
        let reread = try await store.value(Profile.self, for: "1")
        XCTAssertEqual(reread, Profile(name: "Shell"))
    }

    func testCacheEmptiesWhenRawSQLDeletesTheWholeTable() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "profiles")
        try store.put(Profile(name: "Ada"), for: "1")
        XCTAssertEqual(try store.value(Profile.self, for: "1"), Profile(name: "Ada"))
        // No WHERE: SQLite's truncate optimization deletes without calling the update hook.
        try database.write { try $0.execute(sql: "DELETE FROM \"kv:profiles\"") }
        XCTAssertNil(try store.value(Profile.self, for: "1"))
    }

    /// No observation runs: the cache alone looks for other connections' commits, when it is used.
    func testCacheAloneFollowsAnotherConnectionsCommits() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("kv.db")
        var configuration = Coffer.Configuration(encryption: .rawKey(Data(repeating: 5, count: 32)))
        configuration.externalChangeLatency = 0.02
        let database = try Database(path: path, configuration: configuration)
        let store = try KeyValueStore(database: database, name: "profiles")
        try store.put(Profile(name: "Ada"), for: "1")
        XCTAssertEqual(try store.value(Profile.self, for: "1"), Profile(name: "Ada"))
        let other = try Database(path: path, configuration: configuration)
        try other.write { db in
            try db.execute(
                sql: "UPDATE \"kv:profiles\" SET value = ? WHERE key = '1'", arguments: [Data(#"{"name":"Other"}"#.utf8)])
        }
        // Reads go on (they are what asks for a look); within the latency they see the other commit.
        let deadline = Date(timeIntervalSinceNow: 10)
        var seen = try store.value(Profile.self, for: "1")
        while seen != Profile(name: "Other") && Date() < deadline { seen = try store.value(Profile.self, for: "1") }
        XCTAssertEqual(seen, Profile(name: "Other"))
        XCTAssertEqual(try store.value(Profile.self, for: "1"), Profile(name: "Other"), "and the cache keeps the new value")
    }
}
