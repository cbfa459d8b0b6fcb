import Coffer
import Foundation
import XCTest

/// NanoStore's memory, temporary and persistent stores, all through the same API.
final class KeyValueDatabaseKindsTests: XCTestCase {
    private func exercise(_ database: Database) async throws {
        let store = try KeyValueStore(database: database, name: "kinds", configuration: .init(indexes: [Post.likes]))
        try await store.put(Post(id: "a", publishedAt: Date(), likes: 2, author: "x"), for: "a")
        let asyncValue = try await store.value(Post.self, for: "a")
        XCTAssertEqual(asyncValue?.likes, 2)
        try await store.batch { try $0.put(Post(id: "b", publishedAt: Date(), likes: 4, author: "y"), for: "b") }
        let sum = try await store.sum(of: Post.likes, matching: KeyValueQuery())
        XCTAssertEqual(sum, 6)
    }

    func testInMemoryTemporaryAndPersistentDatabases() async throws {
        try await exercise(try Database.inMemory())
        try await exercise(try Database.temporary())
        let fixture = try EncryptedFixture()
        try await exercise(fixture.database)
    }

    func testReadOnlyDatabaseReadsExistingStores() throws {
        let fixture = try EncryptedFixture()
        try KeyValueStore(database: fixture.database, name: "ro").put("saved", for: "k")
        try fixture.database.close()
        var configuration = EncryptedFixture.configuration
        configuration.readOnly = true
        let store = try KeyValueStore(database: try Database(path: fixture.path, configuration: configuration), name: "ro")
        XCTAssertEqual(try store.value(String.self, for: "k"), "saved")
        XCTAssertThrowsError(try store.put("nope", for: "k")) { error in
            XCTAssertTrue(error is CofferError, "\(error)")
        }
    }

    func testDuplicateIndexFieldNamesAreRejected() throws {
        let again = KeyValueIndexField<Post, Int>("likes") { $0.likes * 2 }
        XCTAssertThrowsError(
            try KeyValueStore(
                database: try Database.temporary(), name: "dup", configuration: .init(indexes: [Post.likes, again]))
        ) { error in
            guard case CofferError.invalidConfiguration = error else { return XCTFail("\(error)") }
        }
    }
}
