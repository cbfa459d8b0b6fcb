import Coffer
import Foundation
import XCTest

/// A coder that refuses values it is told to, to test failures.
struct FailingCoder: KeyValueCoder {
    struct Refused: Error {}

    func encode<Value: Encodable>(_ value: Value) throws -> Data {
        if let user = value as? User, user.name == "unencodable" { throw Refused() }
        return try JSONKeyValueCoder().encode(value)
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try JSONKeyValueCoder().decode(type, from: data)
    }
}

/// The app's own serializer: here, a reversed-bytes JSON, so the test sees it was used both ways.
struct ReversingCoder: KeyValueCoder {
    func encode<Value: Encodable>(_ value: Value) throws -> Data {
        Data(try JSONEncoder().encode(value).reversed())
    }

    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try JSONDecoder().decode(type, from: Data(data.reversed()))
    }
}

final class KeyValueCoderTests: XCTestCase {
    func testPropertyListCoderRoundTripsModels() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "plist", configuration: .init(coder: .propertyList))
        let download = Download(etag: "e", downloadedAt: Date(timeIntervalSince1970: 1_700_000_000.5))
        try store.put(User(id: 1, name: "P"), for: "u", metadata: download)
        let item = try XCTUnwrap(try store.item(User.self, for: "u"))
        XCTAssertEqual(item.value, User(id: 1, name: "P"))
        XCTAssertEqual(try item.metadata(as: Download.self), download)
        let header = try database.read { db in
            try db.fetchValue(Data.self, sql: "SELECT value FROM \"kv:plist\" WHERE key = 'u'")
        }
        XCTAssertEqual(header.map { Data($0.prefix(6)) }, Data("bplist".utf8), "stored as a binary property list")
    }

    func testCustomCoderIsUsedForModelsButNotForPlainValues() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "custom", configuration: .init(coder: ReversingCoder()))
        try store.put(User(id: 2, name: "R"), for: "u")
        try store.put("plain", for: "s")
        XCTAssertEqual(try store.value(User.self, for: "u"), User(id: 2, name: "R"))
        XCTAssertEqual(try store.value(String.self, for: "s"), "plain")
        let stored = try database.read { db in
            try db.fetchValue(Data.self, sql: "SELECT value FROM \"kv:custom\" WHERE key = 'u'")
        }
        XCTAssertEqual(stored?.first, UInt8(ascii: "}"), "the custom coder wrote the bytes")
    }

    func testEncodingFailureNamesStoreAndKeyAndWritesNothing() throws {
        let store = try KeyValueStore(
            database: try Database.temporary(), name: "strict", configuration: .init(coder: FailingCoder()))
        try store.put(User(id: 1, name: "fine"), for: "other")
        try store.put(User(id: 2, name: "before"), for: "victim", in: "b")
        XCTAssertThrowsError(try store.put(User(id: 2, name: "unencodable"), for: "victim", in: "b")) { error in
            guard let error = error as? KeyValueError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.reason, .encodingFailed)
            XCTAssertEqual(error.store, "strict")
            XCTAssertEqual(error.bucket, "b")
            XCTAssertEqual(error.key, "victim")
            XCTAssertTrue(error.description.contains("\"victim\""))
        }
        XCTAssertEqual(try store.value(User.self, for: "victim", in: "b")?.name, "before", "the old value survives")
        XCTAssertEqual(try store.value(User.self, for: "other")?.name, "fine")
    }

    func testDecodingFailureNamesStoreAndKeyAndLeavesOtherItemsReadable() throws {
        let database = try Database.temporary()
        let store = try KeyValueStore(database: database, name: "models")
        try store.put(User(id: 1, name: "ok"), for: "good")
        try store.put(User(id: 2, name: "soon broken"), for: "bad")
        try database.write { db in
            try db.execute(sql: "UPDATE \"kv:models\" SET value = ? WHERE key = 'bad'", arguments: [Data("{not json".utf8)])
        }
        store.invalidateCache()
        XCTAssertThrowsError(try store.value(User.self, for: "bad")) { error in
            guard let error = error as? KeyValueError else { return XCTFail("\(error)") }
            XCTAssertEqual(error.reason, .decodingFailed)
            XCTAssertEqual(error.store, "models")
            XCTAssertEqual(error.key, "bad")
        }
        XCTAssertThrowsError(try store.items(User.self)) { error in
            XCTAssertEqual((error as? KeyValueError)?.key, "bad", "a page names the item that failed")
        }
        XCTAssertEqual(try store.value(User.self, for: "good"), User(id: 1, name: "ok"))
        XCTAssertEqual(try store.keys(), ["bad", "good"])
        XCTAssertTrue(try store.delete("bad"))
        XCTAssertEqual(try store.items(User.self).map(\.value), [User(id: 1, name: "ok")])
    }

    func testReadingAsTheWrongTypeIsATypedMismatch() throws {
        let store = try KeyValueStore(database: try Database.temporary(), name: "types")
        try store.put("text", for: "s")
        try store.put(User(id: 1, name: "u"), for: "u")
        XCTAssertThrowsError(try store.value(Int.self, for: "s")) { error in
            XCTAssertEqual((error as? KeyValueError)?.reason, .typeMismatch)
        }
        XCTAssertThrowsError(try store.value(Post.self, for: "u")) { error in
            XCTAssertEqual((error as? KeyValueError)?.reason, .decodingFailed)
        }
        try store.put(300, for: "big")
        XCTAssertThrowsError(try store.value(Int8.self, for: "big")) { error in
            XCTAssertEqual((error as? KeyValueError)?.reason, .typeMismatch, "300 does not fit an Int8")
        }
        XCTAssertNil(try store.value(Int8.self, for: "missing"))
    }
}
