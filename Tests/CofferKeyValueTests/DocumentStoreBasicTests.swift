import Coffer
import CofferTestSupport
import Foundation
import XCTest

struct Person: Codable, Equatable, Sendable {
    var name: String
    var age: Int
    var born: Date
    var tags: [String]
}

final class DocumentStoreBasicTests: XCTestCase {
    func testADynamicDocumentRoundTripsEveryKind() throws {
        let fixture = try EncryptedFixture()
        let store = try DocumentStore(database: fixture.database, name: "people")
        let document: Document = [
            "name": "Tom", "age": 42, "height": 1.85, "admin": true, "born": .date(Date(timeIntervalSince1970: 1e9)),
            "avatar": .data(Data([0, 1, 2])), "nickname": nil, "address": ["city": "Boston", "zip": "02101"],
            "tags": ["a", 1, ["nested": [true]]],
        ]
        try store.put(document, for: "tom")
        XCTAssertEqual(try store.document(for: "tom"), document)
        XCTAssertNil(try store.document(for: "nobody"))
        XCTAssertTrue(try store.contains("tom"))
        // Reopened from the file, with the passphrase.
        let reopened = try DocumentStore(database: try fixture.reopen(), name: "people")
        XCTAssertEqual(try reopened.document(for: "tom"), document)
        XCTAssertEqual(try reopened.count(), 1)
    }

    func testACodableValueIsStoredAndSearchableByItsAttributes() throws {
        let store = try DocumentStore(database: try Database.temporary(), name: "people")
        let ada = Person(name: "Ada", age: 36, born: Date(timeIntervalSince1970: 1000), tags: ["math"])
        try store.put(ada, for: "ada")
        try store.put(Person(name: "Bob", age: 20, born: Date(), tags: []), for: "bob")
        XCTAssertEqual(try store.value(Person.self, for: "ada"), ada)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("tags[]") == "math")), ["ada"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("born") == 1000)), ["ada"])
        XCTAssertThrowsError(try store.value(Int.self, for: "ada")) { error in
            XCTAssertEqual((error as? DocumentError)?.reason, .decodingFailed)
        }
    }

    func testReplacingADocumentReplacesItsAttributes() throws {
        let store = try DocumentStore(database: try Database.temporary(), name: "d")
        try store.put(["city": "Boston", "tags": ["x", "y"]], for: "k")
        try store.put(["city": "Paris"], for: "k")
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("city") == "Boston")), [])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("tags[]") == "x")), [])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("city") == "Paris")), ["k"])
        XCTAssertEqual(try store.count(), 1)
    }

    /// The document and its attribute rows are one transaction: a batch that fails part-way leaves
    /// neither a document nor a stray attribute row.
    func testAFailedBatchWritesNoDocumentAndNoAttribute() throws {
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "d", limits: .init(maximumAttributeCount: 5))
        XCTAssertThrowsError(
            try store.batch { batch in
                try batch.put(["a": 1], for: "first")
                try batch.put(["a": [1, 2, 3, 4, 5, 6]], for: "second")
            })
        XCTAssertEqual(try store.count(), 0)
        let rows = try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \"doc-attr:d\"") }
        XCTAssertEqual(rows, 0)
    }

    func testDeletingByKey() throws {
        let store = try DocumentStore(database: try Database.temporary(), name: "d")
        try store.batch { batch in for index in 0..<5 { try batch.put(["n": .int(Int64(index))], for: "k\(index)") } }
        XCTAssertTrue(try store.delete("k0"))
        XCTAssertFalse(try store.delete("k0"))
        XCTAssertEqual(try store.delete(["k1", "k2", "zz"]), 2)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("n") >= 0)), ["k3", "k4"])
        XCTAssertEqual(try store.removeAll(), 2)
        XCTAssertEqual(try store.count(), 0)
    }

    func testPathsParseAndRenderTheSameWay() {
        XCTAssertEqual(DocumentPath("author.name").components, [.key("author"), .key("name")])
        XCTAssertEqual(DocumentPath("authors[].name").components, [.key("authors"), .elements, .key("name")])
        XCTAssertEqual(DocumentPath("m[][]").components, [.key("m"), .elements, .elements])
        let odd = DocumentPath([.key("v1.2"), .key("a[b]\\"), .elements, .key("")])
        XCTAssertEqual(DocumentPath(odd.description), odd)
        XCTAssertEqual(DocumentPath("").components, [])
    }

    /// The file holds no plaintext of a document: pages are encrypted like every other table's.
    func testDocumentsAreEncryptedOnDisk() throws {
        let fixture = try EncryptedFixture()
        let store = try DocumentStore(database: fixture.database, name: "secrets")
        try store.put(["secret": "PLAINTEXT-MARKER-7f3a"], for: "PLAINTEXT-KEY-7f3a")
        try fixture.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        for file in [fixture.path, fixture.path + "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            XCTAssertNil(bytes.range(of: Data("7f3a".utf8)), file)
        }
    }
}
