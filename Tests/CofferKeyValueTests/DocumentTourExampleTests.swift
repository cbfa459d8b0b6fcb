import Coffer
import CofferTestSupport
import Foundation
import XCTest

// Documents.md's "Settings" key declarations, as written there.
enum Appearance: String, Codable, Sendable { case light, dark }

extension SettingsKey where Value == Appearance {
    static var appearance: SettingsKey<Appearance> { SettingsKey("appearance", default: .light) }
}

/// Documents.md's "Any attribute, never declared" example and its settings in a few lines (once the
/// README's tour), compiled and run as written here too, on SQLCipher 4 as well (the lines between the
/// `Documents.md` markers are the article's code blocks).
final class DocumentTourExampleTests: XCTestCase {
    func testTheDocumentsTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let passphrase = "pw"
        let database = try Database(path: dir.path("test.db"), configuration: .init(encryption: .passphrase(passphrase)))
        // Documents.md begin: Documents
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
        // Documents.md end
        XCTAssertEqual(names, ["Bob", "Ana", "Tom"])
        XCTAssertEqual(averageAge, 39.5)
        XCTAssertEqual(bostonSpeakers, ["tom"])
        try database.close()
        XCTAssertFalse(FileScan.file(dir.path("test.db"), contains: "Boston"), "documents are encrypted at rest")
    }

    func testTheSettingsTourRunsAsWritten() throws {
        let database = try Database.temporary()
        // Documents.md begin: Settings
        let settings = try SettingsStore(database: database)
        settings.register(defaults: ["fontSize": 13])  // read while unset, never written
        let observation = settings.onChange { change in print("changed:", change.name) }
        try settings.set(.dark, for: .appearance)
        let appearance = try settings[.appearance]  // .dark
        let fontSize = try settings.value(Int.self, forName: "fontSize")  // 13
        try settings.remove(.appearance)  // back to its default, .light
        let all = try settings.dictionaryRepresentation()  // ["fontSize": 13]
        observation.cancel()
        // Documents.md end
        XCTAssertEqual(appearance, .dark)
        XCTAssertEqual(fontSize, 13)
        XCTAssertEqual(try settings[.appearance], .light)
        XCTAssertEqual(all, ["fontSize": 13])
    }

    /// The lines between each pair of markers above are, trimmed and in order, one ```swift block of
    /// Documents.md.
    func testTheArticleBlocksAreTheseTests() throws {
        let here = URL(fileURLWithPath: #filePath)
        let article = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent(
                "../../Sources/Coffer/Documentation.docc/Documents.md"),
            encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let blocks = Self.swiftBlocks(in: article)
        for section in ["Documents", "Settings"] {
            let marked = try XCTUnwrap(
                Self.lines(of: source, between: "// Documents.md begin: \(section)", and: "// Documents.md end"))
            XCTAssertTrue(blocks.contains(marked), "\(section): no block of Documents.md is these lines: \(marked)")
        }
    }

    private static func swiftBlocks(in text: String) -> [[String]] {
        var blocks: [[String]] = []
        var rest = text[...]
        while let open = rest.range(of: "```swift\n"), let close = rest.range(of: "```", range: open.upperBound..<rest.endIndex) {
            blocks.append(trimmedLines(rest[open.upperBound..<close.lowerBound]))
            rest = rest[close.upperBound...]
        }
        return blocks
    }

    private static func lines(of text: String, between begin: String, and end: String) -> [String]? {
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
            return nil
        }
        return trimmedLines(text[start.upperBound..<stop.lowerBound])
    }

    private static func trimmedLines(_ text: Substring) -> [String] {
        text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
