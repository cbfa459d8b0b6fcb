import Coffer
import Foundation
import XCTest

final class DocumentPredicateTests: XCTestCase {
    private var store: DocumentStore!

    /// XCTest keeps every test case object until the run ends: the store's temporary database is
    /// released (closed, its directory removed) with the test.
    override func tearDown() {
        store = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        store = try DocumentStore(database: try Database.temporary(), name: "people")
        let people: [String: Document] = [
            "tom": ["name": "Tom", "last": "Jones", "age": 42, "tags": ["admin", "swift"], "city": "Boston"],
            "ada": ["name": "Ada", "last": "Lovelace", "age": 36.5, "tags": ["math"], "nickname": nil],
            "bob": ["name": "bob", "last": "50%_off\\x", "age": 20, "tags": [], "city": "boston"],
            "eve": ["name": "Eve", "last": "Jon\u{0}es", "age": "unknown", "address": ["city": "Paris"]],
            "zed": ["name": "ZED", "when": .date(Date(timeIntervalSince1970: 100)), "blob": .data(Data([1, 2]))],
        ]
        try store.batch { batch in for (key, person) in people { try batch.put(person, for: key) } }
    }

    private func keys(_ predicate: DocumentPredicate) throws -> [String] {
        try store.keys(matching: DocumentQuery(predicate, orderedBy: [])).sorted()
    }

    private let age = DocumentField("age")

    func testComparisonsSeeOnlyValuesOfTheComparedKind() throws {
        XCTAssertEqual(try keys(age == 42), ["tom"])
        XCTAssertEqual(try keys(age > 30), ["ada", "tom"], "eve's string age is not a number")
        XCTAssertEqual(try keys(age >= 36.5), ["ada", "tom"])
        XCTAssertEqual(try keys(age < 36.5), ["bob"])
        XCTAssertEqual(try keys(age <= 36.5), ["ada", "bob"])
        XCTAssertEqual(try keys(age != 42), ["ada", "bob", "eve"], "has an age, and it is not 42")
        XCTAssertEqual(try keys(age.between(20, 40)), ["ada", "bob"])
        XCTAssertEqual(try keys(age.isIn([20, 42, "unknown"])), ["bob", "eve", "tom"])
        XCTAssertEqual(try keys(age.isIn([])), [])
        XCTAssertEqual(try keys(DocumentField("when") < .date(Date(timeIntervalSince1970: 101))), ["zed"])
        XCTAssertEqual(try keys(DocumentField("blob") == .data(Data([1, 2]))), ["zed"])
        XCTAssertThrowsError(try keys(age.between(1, "z"))) { error in
            XCTAssertEqual((error as? DocumentError)?.reason, .invalidPredicate)
        }
        XCTAssertThrowsError(try keys(age == ["a": 1]))
    }

    func testNullMissingAndExists() throws {
        XCTAssertEqual(try keys(DocumentField("nickname").isNull), ["ada"])
        XCTAssertEqual(try keys(DocumentField("nickname").exists), ["ada"])
        XCTAssertEqual(try keys(DocumentField("city").isMissing), ["ada", "eve", "zed"])
        XCTAssertEqual(try keys(DocumentField("address.city") == "Paris"), ["eve"])
        XCTAssertEqual(try keys(DocumentField("address").exists), ["eve"])
    }

    func testStringMatchesTakePatternCharactersLiterally() throws {
        let last = DocumentField("last")
        XCTAssertEqual(try keys(last.beginsWith("Jo")), ["eve", "tom"])
        XCTAssertEqual(try keys(last.beginsWith("jo")), [])
        XCTAssertEqual(try keys(last.beginsWith("jo", caseInsensitive: true)), ["eve", "tom"])
        XCTAssertEqual(try keys(last.beginsWith("50%_")), ["bob"])
        XCTAssertEqual(try keys(last.beginsWith("5_%")), [], "_ and % are not wildcards")
        XCTAssertEqual(try keys(last.contains("%_off\\")), ["bob"])
        XCTAssertEqual(try keys(last.contains("n\u{0}e")), ["eve"], "NUL is a character like any other")
        XCTAssertEqual(try keys(last.contains("LACE", caseInsensitive: true)), ["ada"])
        XCTAssertEqual(try keys(last.endsWith("\u{0}es")), ["eve"])
        XCTAssertEqual(try keys(last.endsWith("ES", caseInsensitive: true)), ["eve", "tom"])
        XCTAssertEqual(try keys(last.endsWith("\\x")), ["bob"])
        XCTAssertEqual(try keys(DocumentField("name").isIn(["bob", "ZED"])), ["bob", "zed"])
    }

    func testAnyElementOfAnArray() throws {
        let tags = DocumentField("tags[]")
        XCTAssertEqual(try keys(tags == "swift"), ["tom"])
        XCTAssertEqual(try keys(tags.beginsWith("ma")), ["ada"])
        XCTAssertEqual(try keys(DocumentField("tags").exists && !tags.exists), ["bob"], "an empty array")
    }

    func testAndOrNotAndKeys() throws {
        let city = DocumentField("city")
        XCTAssertEqual(try keys(city == "Boston" || DocumentField("address.city") == "Paris"), ["eve", "tom"])
        XCTAssertEqual(try keys(city.beginsWith("b", caseInsensitive: true) && age < 30), ["bob"])
        XCTAssertEqual(try keys(!(age > 30)), ["bob", "eve", "zed"])
        XCTAssertEqual(try keys(.and([])), ["ada", "bob", "eve", "tom", "zed"])
        XCTAssertEqual(try keys(.or([])), [])
        XCTAssertEqual(try keys(.key("ada") || .keyMatches(.beginsWith, "t")), ["ada", "tom"])
    }

    func testValueSearchAcrossAllAttributes() throws {
        XCTAssertEqual(try keys(.anyAttribute(equalTo: "Paris")), ["eve"])
        XCTAssertEqual(try keys(.anyAttribute(.contains, "OSTON", caseInsensitive: true)), ["bob", "tom"])
        XCTAssertEqual(try keys(.anyAttribute(.greater, 40)), ["tom"])
    }

    func testOrderingPagingAndMissingValues() throws {
        let byAge = DocumentQuery(orderedBy: [.ascending("age")])
        // Missing first, then by kind (number < string), then by value.
        XCTAssertEqual(try store.keys(matching: byAge), ["zed", "bob", "ada", "tom", "eve"])
        let descending = DocumentQuery(orderedBy: [.descending("age")])
        XCTAssertEqual(try store.keys(matching: descending), ["eve", "tom", "ada", "bob", "zed"])
        let page = DocumentQuery(orderedBy: [.ascending("age")], limit: 2, offset: 1)
        XCTAssertEqual(try store.keys(matching: page), ["bob", "ada"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(limit: 2)), ["ada", "bob"], "key order by default")
        let byTag = DocumentQuery(DocumentField("tags").exists, orderedBy: [.descending("tags[]")])
        XCTAssertEqual(try store.keys(matching: byTag), ["tom", "ada", "bob"])
    }

    func testResultsAsDocumentsValuesAndChosenAttributes() throws {
        let query = DocumentQuery(age > 30, orderedBy: [.ascending("age")])
        XCTAssertEqual(try store.documents(matching: query).map(\.key), ["ada", "tom"])
        XCTAssertEqual(try store.documents(matching: query).first?.document?["last"], "Lovelace")
        let chosen = try store.attributes(["name", "tags[]", "missing"], matching: query)
        XCTAssertEqual(chosen.map(\.key), ["ada", "tom"])
        XCTAssertEqual(chosen[1].values, ["name": "Tom", "tags[]": "admin"])
    }

    func testAggregates() throws {
        XCTAssertEqual(try store.aggregate(.count, of: "age"), 3)
        XCTAssertEqual(try store.aggregate(.sum, of: "age"), 98.5)
        XCTAssertEqual(try store.aggregate(.maximum, of: "age"), 42)
        XCTAssertEqual(try store.aggregate(.minimum, of: "age", matching: DocumentQuery(age > 25)), 36.5)
        XCTAssertEqual(try XCTUnwrap(store.aggregate(.average, of: "age")), 98.5 / 3, accuracy: 1e-9)
        XCTAssertNil(try store.aggregate(.average, of: "nothing"))
        XCTAssertEqual(try store.count(matching: DocumentQuery(age > 30)), 2)
    }

    func testDeleteByPredicateIsOneTransaction() throws {
        XCTAssertEqual(try store.delete(matching: DocumentQuery(age < 40)), 2)
        XCTAssertEqual(try keys(.all), ["eve", "tom", "zed"])
        XCTAssertEqual(try keys(DocumentField("name") == "Ada"), [], "attributes go with the document")
    }
}
