import Coffer
import Foundation
import XCTest

final class DocumentBagTests: XCTestCase {
    func testBagsHoldDocumentsAndAreSearchable() throws {
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "people")
        try store.batch { batch in
            for (key, age) in [("a", 10), ("b", 20), ("c", 30)] { try batch.put(["age": .int(Int64(age))], for: key) }
            try batch.add(["a", "b", "missing"], toBag: "kids")
        }
        XCTAssertEqual(try store.add(["b", "c"], toBag: "staff"), 2)
        XCTAssertEqual(try store.add(["b"], toBag: "staff"), 0, "already in it")
        XCTAssertEqual(try store.keys(inBag: "kids"), ["a", "b"])
        XCTAssertEqual(try store.bags(containing: "b"), ["kids", "staff"])
        XCTAssertEqual(try store.bagNames(), ["kids", "staff"])
        let older = DocumentQuery(DocumentField("age") > 15, inBag: "kids")
        XCTAssertEqual(try store.keys(matching: older), ["b"])
        XCTAssertEqual(try store.aggregate(.sum, of: "age", matching: DocumentQuery(inBag: "staff")), 50)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(.inBag("kids") || .inBag("staff"))), ["a", "b", "c"])

        XCTAssertEqual(try store.remove(["a"], fromBag: "kids"), 1)
        XCTAssertTrue(try store.contains("a"), "removing from a bag keeps the document")
        try store.put(["age": 21], for: "b")
        XCTAssertEqual(try store.bags(containing: "b"), ["kids", "staff"], "a re-put keeps memberships")

        XCTAssertTrue(try store.delete("b"))
        XCTAssertEqual(try store.keys(inBag: "kids"), [])
        XCTAssertEqual(try store.keys(inBag: "staff"), ["c"], "deleting a document empties it out of every bag")
        let stray = try database.read { db in
            try db.fetchValue(
                Int.self, sql: "SELECT count(*) FROM \"doc-bag:people\" WHERE doc_id NOT IN (SELECT id FROM \"doc:people\")")
        }
        XCTAssertEqual(stray, 0)
        XCTAssertEqual(try store.removeBag("staff"), 1)
        XCTAssertEqual(try store.bagNames(), [])
        XCTAssertEqual(try store.count(), 2)
    }
}
