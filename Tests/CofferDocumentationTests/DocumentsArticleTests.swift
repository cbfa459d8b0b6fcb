import Coffer
import CofferTestSupport
import Foundation
import XCTest

// Documents.md, "Settings": the typed key, as written there.
enum Appearance: String, Codable, Sendable { case light, dark }

extension SettingsKey where Value == Appearance {
    static var appearance: SettingsKey<Appearance> { SettingsKey("appearance", default: .light) }
}

/// The ```swift blocks of Documents.md ("Documents and settings"), compiled and run as written.
final class DocumentsArticleTests: XCTestCase {
    func testOverview() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let people = try DocumentStore(database: database, name: "people")
        try people.put(["name": "Tom", "age": 42, "address": ["city": "Boston"], "tags": ["admin"]], for: "tom")
        let admins = try people.keys(
            matching: DocumentQuery(DocumentField("tags[]") == "admin", orderedBy: [.descending("age")], limit: 20))
        let settings = try SettingsStore(database: database)
        try settings.set(.dark, for: .appearance)

        XCTAssertEqual(admins, ["tom"])
        XCTAssertEqual(try settings[.appearance], .dark)
    }

    func testAnyAttributeNeverDeclared() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let people = try DocumentStore(database: database, name: "people")
        try people.put(
            ["FirstName": "Tom", "LastName": "Jones", "Age": 42, "Address": ["City": "Boston"], "Tags": ["admin"]],
            for: "tom")
        try people.put(["FirstName": "Ana", "LastName": "Jonas", "Age": 37, "Address": ["City": "Porto"]], for: "ana")
        try people.put(["FirstName": "Bob", "LastName": "Smith", "Age": 29, "Tags": ["admin", "ops"]], for: "bob")

        // Any attribute, never declared: surname starting "jon" (any case), or an admin; youngest first.
        let query = DocumentQuery(
            DocumentField("LastName").beginsWith("jon", caseInsensitive: true) || DocumentField("Tags[]") == "admin",
            orderedBy: [.ascending("Age")])
        let names = try people.documents(matching: query).compactMap { $0.document?["FirstName"]?.stringValue }
        // ["Bob", "Ana", "Tom"]
        let averageAge = try people.aggregate(.average, of: "Age", matching: DocumentQuery(DocumentField("Age") > 30))
        // 39.5
        try people.add(["tom", "ana"], toBag: "speakers")
        let bostonSpeakers = try people.keys(
            matching: DocumentQuery(DocumentField("Address.City") == "Boston", inBag: "speakers"))
        // ["tom"]

        XCTAssertEqual(names, ["Bob", "Ana", "Tom"])
        XCTAssertEqual(averageAge, 39.5)
        XCTAssertEqual(bostonSpeakers, ["tom"])
        try database.close()
        XCTAssertFalse(FileScan.file(directory.path("app.db"), contains: "Boston"), "documents are encrypted at rest")
    }

    func testSettingsInAFewLines() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let settings = try SettingsStore(database: database)
        settings.register(defaults: ["fontSize": 13])  // read while unset, never written
        let observation = settings.onChange { change in print("changed:", change.name) }
        try settings.set(.dark, for: .appearance)
        let appearance = try settings[.appearance]  // .dark
        let fontSize = try settings.value(Int.self, forName: "fontSize")  // 13
        try settings.remove(.appearance)  // back to its default, .light
        let all = try settings.dictionaryRepresentation()  // ["fontSize": 13]
        observation.cancel()

        XCTAssertEqual(appearance, .dark)
        XCTAssertEqual(fontSize, 13)
        XCTAssertEqual(try settings[.appearance], .light)
        XCTAssertEqual(all, ["fontSize": 13])
    }

    func testValuesReadingPathsBatchesAndBags() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        // Values
        let title = "Release notes"
        let tags = ["swift", "sqlite"]
        let wordCount = 1_250
        let note: Document = [
            "title": .string(title),  // a String variable is not a literal
            "words": .int(Int64(wordCount)),
            "rating": .double(4.5),
            "published": .bool(true),
            "written": .date(Date(timeIntervalSince1970: 1_700_000_000)),
            "thumbnail": .data(Data([0x89, 0x50, 0x4E, 0x47])),
            "reviewer": .null,  // an explicit null, unlike a missing attribute
            "tags": .array(tags.map { .string($0) }),
            "meta": .object(["v1.2": "shipped", "a[0]": "literal brackets"]),
        ]
        let notes = try DocumentStore(database: database, name: "notes")
        try notes.put(note, for: "n1")

        XCTAssertEqual(try notes.document(for: "n1"), note)
        XCTAssertEqual(
            try notes.keys(matching: DocumentQuery(DocumentField("written") > .date(Date(timeIntervalSince1970: 0)))), ["n1"])
        XCTAssertEqual(try notes.keys(matching: DocumentQuery(DocumentField("written") > 0)), [], "a date is not a number")
        XCTAssertEqual(try notes.keys(matching: DocumentQuery(DocumentField("reviewer").isNull)), ["n1"])
        XCTAssertEqual(
            try notes.keys(matching: DocumentQuery(DocumentField("thumbnail") == .data(Data([0x89, 0x50, 0x4E, 0x47])))), ["n1"])

        // Reading a document back
        let stored = try notes.document(for: "n1")  // Document?, nil when the key is not there
        let words = stored?["words"]?.intValue  // 1250
        let firstTag = try notes.value(for: "n1")?["tags[]"]?.stringValue  // "swift"

        XCTAssertEqual(words, 1250)
        XCTAssertEqual(firstTag, "swift")
        XCTAssertNil(try notes.document(for: "nobody"))

        // Paths
        let version = DocumentPath([.key("meta"), .key("v1.2")])
        print(version)  // meta.v1\.2
        let sameVersion: DocumentPath = #"meta.v1\.2"#
        let brackets = DocumentPath([.key("meta"), .key("a[0]")])  // written meta.a\[0\]
        let shipped = try notes.keys(matching: DocumentQuery(DocumentField(version) == "shipped"))  // ["n1"]

        XCTAssertEqual(version.description, #"meta.v1\.2"#)
        XCTAssertEqual(version, sameVersion)
        XCTAssertEqual(brackets.description, #"meta.a\[0\]"#)
        XCTAssertEqual(DocumentPath(brackets.description), brackets)
        XCTAssertEqual(try notes.keys(matching: DocumentQuery(DocumentField(brackets) == "literal brackets")), ["n1"])
        XCTAssertEqual(shipped, ["n1"])
        XCTAssertEqual(
            try notes.keys(matching: DocumentQuery(DocumentField("meta.v1.2") == "shipped")), [], "unescaped: meta → v1 → 2")

        // Batches and bags
        try notes.batch { batch in
            for number in 2...4 {
                try batch.put(["title": .string("Draft \(number)"), "words": .int(Int64(number * 100))], for: "n\(number)")
            }
            try batch.add(["n2", "n3", "n4"], toBag: "drafts")
        }
        try notes.remove(["n4"], fromBag: "drafts")  // the document stays in the store
        let drafts = try notes.keys(inBag: "drafts")  // ["n2", "n3"]
        let bags = try notes.bags(containing: "n2")  // ["drafts"]
        let longDrafts = try notes.count(matching: DocumentQuery(DocumentField("words") >= 300, inBag: "drafts"))  // 1

        XCTAssertEqual(drafts, ["n2", "n3"])
        XCTAssertEqual(bags, ["drafts"])
        XCTAssertEqual(longDrafts, 1)
        XCTAssertTrue(try notes.contains("n4"))
        XCTAssertEqual(try notes.count(), 4)
    }

    func testSortOrder() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let mixed = try DocumentStore(database: database, name: "mixed")
        try mixed.batch { batch in
            try batch.put(["v": "text"], for: "string")
            try batch.put(["v": 2], for: "int")
            try batch.put(["v": 2.0], for: "double")
            try batch.put(["v": .date(Date(timeIntervalSince1970: 0))], for: "date")
            try batch.put(["v": true], for: "bool")
            try batch.put(["v": nil], for: "null")
            try batch.put(["v": .data(Data([1]))], for: "data")
            try batch.put(["v": ["a": 1]], for: "object")
            try batch.put(["v": [1, 2]], for: "array")
            try batch.put(["v": .double(.nan)], for: "nan")
            try batch.put(["other": 1], for: "missing")
        }
        let ascending = try mixed.keys(matching: DocumentQuery(orderedBy: [.ascending("v")]))
        // ["missing", "null", "bool", "double", "int", "date", "string", "data", "object", "array", "nan"]
        let descending = try mixed.keys(matching: DocumentQuery(orderedBy: [.descending("v")]))
        // ["nan", "array", "object", "data", "string", "date", "double", "int", "bool", "null", "missing"]

        XCTAssertEqual(
            ascending, ["missing", "null", "bool", "double", "int", "date", "string", "data", "object", "array", "nan"])
        XCTAssertEqual(
            descending, ["nan", "array", "object", "data", "string", "date", "double", "int", "bool", "null", "missing"])
    }

    /// What the "Sort order" text claims beyond the example: strings and data by bytes, objects and arrays
    /// by member count, array paths by their smallest (largest) element, ties in key byte order.
    func testSortOrderDetails() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        let store = try DocumentStore(database: database, name: "details")
        try store.batch { batch in
            try batch.put(["s": "a", "o": ["x": 1, "y": 2], "t": [5, 1]], for: "k1")
            try batch.put(["s": "B", "o": ["x": 1], "t": [3]], for: "k2")
            try batch.put(["s": "a", "o": ["x": 1, "y": 2, "z": 3], "t": [4, 2]], for: "K0")
        }
        func keys(_ ordering: DocumentOrdering) throws -> [String] {
            try store.keys(matching: DocumentQuery(orderedBy: [ordering]))
        }
        XCTAssertEqual(try keys(.ascending("s")), ["k2", "K0", "k1"])  // "B" < "a"; the "a" tie by key bytes
        XCTAssertEqual(try keys(.descending("s")), ["K0", "k1", "k2"])
        XCTAssertEqual(try keys(.ascending("o")), ["k2", "k1", "K0"])  // 1, 2, 3 members
        XCTAssertEqual(try keys(.ascending("t[]")), ["k1", "K0", "k2"])  // smallest: 1, 2, 3
        XCTAssertEqual(try keys(.descending("t[]")), ["k1", "K0", "k2"])  // largest: 5, 4, 3
    }

    func testSettings() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        let applied = Received<SettingsChange>()
        @Sendable func applySetting(_ change: SettingsChange) { applied.append(change) }

        let settings = try SettingsStore(database: database)  // table "settings:standard"
        settings.register(defaults: ["fontSize": 13, "sidebar": true])
        let observation = settings.onChange { change in applySetting(change) }
        try settings.set(15, forName: "fontSize")  // applySetting(fontSize → 15)
        let fontSize = try settings.value(Int.self, forName: "fontSize")  // 15: stored beats registered
        let sidebar = try settings.value(Bool.self, forName: "sidebar")  // true: registered, never written
        let theme = try settings[.appearance]  // .light: the key's own default
        observation.cancel()
        try settings.remove(name: "fontSize")  // reads 13 again; applySetting is not called

        XCTAssertEqual(fontSize, 15)
        XCTAssertEqual(sidebar, true)
        XCTAssertEqual(theme, .light)
        XCTAssertEqual(try settings.value(Int.self, forName: "fontSize"), 13)
        XCTAssertEqual(applied.values, [SettingsChange(name: "fontSize", newValue: 15)])
        let tables = try database.read { db in
            try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'settings:%'")
                .map { try $0.decode(String.self, at: 0) }
        }
        XCTAssertEqual(tables, ["settings:standard"])
    }
}
