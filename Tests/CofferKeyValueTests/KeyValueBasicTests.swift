import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class KeyValueBasicTests: XCTestCase {
    func testTypedValuesRoundTripThroughAnEncryptedFile() throws {
        let fixture = try EncryptedFixture()
        let store = try KeyValueStore(database: fixture.database, name: "values")
        let data = Data([0, 1, 2, 0xFF])
        try store.put("héllo 🌍", for: "string")
        try store.put(42, for: "int")
        try store.put(Int64.min, for: "int64")
        try store.put(3.25, for: "double")
        try store.put(true, for: "bool")
        try store.put(data, for: "data")
        try store.put(User(id: 7, name: "Ada Lovelace", tags: ["x"]), for: "user")
        try store.put(["a": 1, "b": 2], for: "dictionary")

        XCTAssertEqual(try store.value(String.self, for: "string"), "héllo 🌍")
        XCTAssertEqual(try store.value(Int.self, for: "int"), 42)
        XCTAssertEqual(try store.value(Int64.self, for: "int64"), Int64.min)
        XCTAssertEqual(try store.value(Double.self, for: "double"), 3.25)
        XCTAssertEqual(try store.value(Bool.self, for: "bool"), true)
        XCTAssertEqual(try store.value(Data.self, for: "data"), data)
        XCTAssertEqual(try store.value(User.self, for: "user"), User(id: 7, name: "Ada Lovelace", tags: ["x"]))
        XCTAssertEqual(try store.value([String: Int].self, for: "dictionary"), ["a": 1, "b": 2])
        XCTAssertNil(try store.value(String.self, for: "missing"))

        try fixture.database.close()
        // A 12-byte marker: random ciphertext of n bytes holds a given 3-byte string with a chance of about
        // n / 16 MiB (this test once failed that way with "Ada").
        XCTAssertFalse(FileScan.file(fixture.path, contains: "Ada Lovelace"), "values are encrypted at rest")
        XCTAssertFalse(FileScan.file(fixture.path, contains: "héllo"))

        let reopened = try KeyValueStore(database: try fixture.reopen(), name: "values")
        XCTAssertEqual(try reopened.value(User.self, for: "user"), User(id: 7, name: "Ada Lovelace", tags: ["x"]))
        XCTAssertEqual(try reopened.value(Int.self, for: "int"), 42)
    }

    func testPlainValuesKeepTheirStorageClass() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "plain")
        try store.put("text", for: "s")
        try store.put(5, for: "i")
        try store.put(User(id: 1, name: "B"), for: "u")
        let types = try database.read { db in
            try db.fetchAll(sql: "SELECT key, typeof(value) FROM \"kv:plain\" ORDER BY key")
                .map { "\(try $0.decode(String.self, at: 0))=\(try $0.decode(String.self, at: 1))" }
        }
        XCTAssertEqual(types, ["i=integer", "s=text", "u=blob"])
    }

    func testItemCarriesMetadataAndTimestamps() throws {
        let clock = TestClock()
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "feed", configuration: .init(now: clock.function))
        let created = clock.now
        let download = Download(etag: "\"abc\"", downloadedAt: created)
        try store.put(User(id: 1, name: "A"), for: "1", metadata: download)

        let first = try XCTUnwrap(try store.item(User.self, for: "1"))
        XCTAssertEqual(first.value, User(id: 1, name: "A"))
        XCTAssertEqual(first.createdAt, created)
        XCTAssertEqual(first.updatedAt, created)
        XCTAssertNil(first.expiresAt)
        XCTAssertEqual(try first.metadata(as: Download.self), download)
        XCTAssertEqual(first.key, "1")
        XCTAssertEqual(first.bucket, KeyValueStore.defaultBucket)

        clock.advance(by: 10)
        try store.put(User(id: 1, name: "A2"), for: "1", metadata: "etag-2")
        let second = try XCTUnwrap(try store.item(User.self, for: "1"))
        XCTAssertEqual(second.createdAt, created, "a re-put keeps the creation date")
        XCTAssertEqual(second.updatedAt, created + 10)
        XCTAssertEqual(try second.metadata(as: String.self), "etag-2")

        try store.put(User(id: 1, name: "A3"), for: "1")
        let third = try XCTUnwrap(try store.item(User.self, for: "1"))
        XCTAssertFalse(third.hasMetadata, "a put without metadata replaces the whole item")
        XCTAssertNil(try third.metadata(as: String.self))
    }

    func testBucketsSeparateEqualKeys() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "buckets")
        try store.put("default", for: "k")
        try store.put("feed", for: "k", in: "feed")
        XCTAssertEqual(try store.value(String.self, for: "k"), "default")
        XCTAssertEqual(try store.value(String.self, for: "k", in: "feed"), "feed")
        XCTAssertEqual(try store.buckets(), ["default", "feed"])
        XCTAssertEqual(try store.count(), 1)
        XCTAssertEqual(try store.totalCount(), 2)
        XCTAssertTrue(try store.contains("k", in: "feed"))
        XCTAssertFalse(try store.contains("k", in: "other"))
    }

    func testStoresAreCreatedOnFirstUseAndIsolated() throws {
        let database = try Database.temporary()
        let a = try KeyValueStore(database: database, name: "a")
        let b = try KeyValueStore(database: database, name: "a_index")  // cannot collide with a's tables
        let weird = try KeyValueStore(database: database, name: "we\"ird'; DROP TABLE x; --")
        try a.put(1, for: "k")
        try b.put(2, for: "k")
        try weird.put(3, for: "k")
        XCTAssertEqual(try a.value(Int.self, for: "k"), 1)
        XCTAssertEqual(try b.value(Int.self, for: "k"), 2)
        XCTAssertEqual(try weird.value(Int.self, for: "k"), 3)
        // Opening again finds the existing tables.
        XCTAssertEqual(try KeyValueStore(database: database, name: "a").value(Int.self, for: "k"), 1)
    }

    func testArbitraryUnicodeKeysAndBucketsAreBoundNotSpliced() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "unicode")
        let keys = [
            "", " ", "'", "\"", "'); DROP TABLE \"kv:unicode\"; --", "a\u{0}b", "%", "_", "\\",
            "é", "e\u{301}", "🇫🇷", "日本語", String(repeating: "x", count: 10_000),
        ]
        for (offset, key) in keys.enumerated() {
            try store.put(offset, for: key, in: key)
        }
        for _ in 0..<2 {  // the second pass is served by the cache, which must not merge é and e + ◌́
            for (offset, key) in keys.enumerated() {
                XCTAssertEqual(try store.value(Int.self, for: key, in: key), offset, "key \(key.debugDescription)")
            }
        }
        XCTAssertEqual(try store.totalCount(), keys.count, "é precomposed and decomposed are distinct keys")
    }
}

/// The port of YTKKeyValueStore's example (KeyValue.md, "Overview"), kept compiling and passing.
final class KeyValueReadmeExampleTests: XCTestCase {
    struct ReadmeUser: Codable, Equatable, Sendable {
        var id: Int
        var name: String
        var age: Int
    }

    func testYTKKeyValueStoreExamplePort() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("test.db")
        let passphrase = "correct horse battery staple"

        let database = try Database(path: path, configuration: .init(encryption: .passphrase(passphrase)))
        let store = try KeyValueStore(database: database, name: "user_table")
        try store.put(ReadmeUser(id: 1, name: "tangqiao", age: 30), for: "1")
        let user = try store.value(ReadmeUser.self, for: "1")

        XCTAssertEqual(user, ReadmeUser(id: 1, name: "tangqiao", age: 30))
        try store.put(["id": "2", "name": "Ada"], for: "2")  // a plain dictionary works too
        XCTAssertEqual(try store.value([String: String].self, for: "2")?["name"], "Ada")
    }
}
