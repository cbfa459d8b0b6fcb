import Coffer
import CofferTestSupport
import Foundation
import XCTest

// The README's "Settings" key declarations, as written there.
enum Appearance: String, Codable, Sendable { case light, dark }

extension SettingsKey where Value == Appearance {
    static var appearance: SettingsKey<Appearance> { SettingsKey("appearance", default: .light) }
}

/// The README's "Documents" and "Settings" tour sections, compiled and run as written (the lines between
/// the `README` markers are the README's code blocks).
final class DocumentReadmeExampleTests: XCTestCase {
    func testTheDocumentsTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let passphrase = "pw"
        let database = try Database(path: dir.path("test.db"), configuration: .init(encryption: .passphrase(passphrase)))
        // README begin: Documents
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
        // README end
        XCTAssertEqual(names, ["Bob", "Ana", "Tom"])
        XCTAssertEqual(averageAge, 39.5)
        XCTAssertEqual(bostonSpeakers, ["tom"])
        try database.close()
        XCTAssertFalse(FileScan.file(dir.path("test.db"), contains: "Boston"), "documents are encrypted at rest")
    }

    func testTheSettingsTourRunsAsWritten() throws {
        let database = try Database.temporary()
        // README begin: Settings
        let settings = try SettingsStore(database: database)
        settings.register(defaults: ["fontSize": 13])  // read while unset, never written
        let observation = settings.onChange { change in print("changed:", change.name) }
        try settings.set(.dark, for: .appearance)
        let appearance = try settings[.appearance]  // .dark
        let fontSize = try settings.value(Int.self, forName: "fontSize")  // 13
        try settings.remove(.appearance)  // back to its default, .light
        let all = try settings.dictionaryRepresentation()  // ["fontSize": 13]
        observation.cancel()
        // README end
        XCTAssertEqual(appearance, .dark)
        XCTAssertEqual(fontSize, 13)
        XCTAssertEqual(try settings[.appearance], .light)
        XCTAssertEqual(all, ["fontSize": 13])
    }

    /// The README's two code blocks are what the tests above run: each README line (trimmed) is a line of
    /// this file, and the lines between each pair of markers are the README block's, in order.
    func testTheReadmeBlocksAreTheseTests() throws {
        let here = URL(fileURLWithPath: #filePath)
        let readme = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent("../../README.md"), encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let sourceLines = Set(source.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) })
        for section in ["Documents", "Settings"] {
            let block = try XCTUnwrap(Self.firstSwiftBlock(after: "### \(section)", in: readme), section)
            for line in block where !sourceLines.contains(line) { XCTFail("README \(section) line not run: \(line)") }
            let marked = try XCTUnwrap(Self.lines(of: source, between: "// README begin: \(section)", and: "// README end"))
            XCTAssertEqual(marked, block.filter { marked.contains($0) }, section)
            XCTAssertEqual(marked, Array(block.suffix(marked.count)), "\(section): the marked lines end the block")
        }
    }

    private static func firstSwiftBlock(after heading: String, in text: String) -> [String]? {
        guard let start = text.range(of: heading + "\n"),
            let open = text.range(of: "```swift\n", range: start.upperBound..<text.endIndex),
            let close = text.range(of: "```", range: open.upperBound..<text.endIndex)
        else { return nil }
        return trimmedLines(text[open.upperBound..<close.lowerBound])
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
