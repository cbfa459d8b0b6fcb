import Coffer
import CofferTestSupport
import Foundation
import XCTest

// KeyValue.md's examples store YTKKeyValueStore's user.
private struct User: Codable, Sendable, Equatable {
    var id: Int
    var name: String
    var age: Int
}

/// The ```swift blocks of KeyValue.md, compiled and run as written.
final class KeyValueArticleTests: XCTestCase {
    func testOverviewAndBuckets() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let store = try KeyValueStore(database: database, name: "user_table")  // created on first use
        try store.put(User(id: 1, name: "tangqiao", age: 30), for: "1")
        let user = try store.value(User.self, for: "1")

        XCTAssertEqual(user, User(id: 1, name: "tangqiao", age: 30))

        try store.put(User(id: 2, name: "ana", age: 31), for: "2", in: "archive")  // another bucket
        let archived = try store.value(User.self, for: "2", in: "archive")  // ana
        let wasThere = try store.delete("2", in: "archive")  // true
        let deletedCount = try store.delete(["1", "9"])  // 1: "1" was there, "9" was not
        let gone = try store.delete(keysWithPrefix: "draft/", in: "archive")  // 0
        let buckets = try store.buckets()  // []: nothing left

        XCTAssertEqual(archived?.name, "ana")
        XCTAssertTrue(wasThere)
        XCTAssertEqual(deletedCount, 1)
        XCTAssertEqual(gone, 0)
        XCTAssertEqual(buckets, [])
        XCTAssertFalse(try store.delete("2", in: "archive"))
    }
}
