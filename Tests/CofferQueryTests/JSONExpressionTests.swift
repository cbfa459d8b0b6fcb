import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A profile whose details are a JSON document in a text column.
@Table("profile")
struct Profile: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var json: String
}

/// SQLite's JSON functions in typed expressions: checked against Foundation's own JSON parser on the same
/// documents where the library has them (SQLite 3.38, SQLCipher 4.5.1 and later), and a typed
/// `unsupportedByLibrary` error where it does not (3.4.1).
final class JSONExpressionTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var database: Database!
    private var documents: [String] = []

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-json")
        database = try Database(path: directory.path("profiles.db"), configuration: Configuration(encryption: .passphrase("j")))
        var random = SeededGenerator(seed: 42)
        let cities = ["北京", "Zürich", "São Paulo", "Oslo", "\"quoted\" city"]
        documents = (0..<200).map { index in
            var fields: [String] = []
            if index % 7 != 0 { fields.append("\"age\": \(Int.random(in: 1...90, using: &random))") }
            if index % 5 != 0 { fields.append("\"city\": \(Self.quoted(cities[index % cities.count]))") }
            let tags = (0..<(index % 4)).map { "\"t\($0)\"" }.joined(separator: ", ")
            fields.append("\"tags\": [\(tags)]")
            return "{" + fields.joined(separator: ", ") + "}"
        }
        try database.write { db in
            _ = try db.upgradeSchema(for: [Profile.self])
            for document in documents {
                var profile = Profile(id: nil, json: document)
                try profile.insert(db)
            }
        }
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    private static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// Foundation's reading of document `index`: nil when it is not an object.
    private func parsed(_ index: Int) -> [String: Any]? {
        (try? JSONSerialization.jsonObject(with: Data(documents[index].utf8))) as? [String: Any]
    }

    func testJSONFunctionsAgreeWithFoundationsParser() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.json), "SQLite \(LinkedSQLite.version) has no JSON functions")
        let adults = try database.read { db in
            try Profile.filter { $0.json.jsonExtract("$.age", as: Int?.self) >= 18 }
                .order { $0.id.asc }.select { $0.id }.fetchAll(db).compactMap { $0 }
        }
        let expectedAdults = documents.indices.filter { ((parsed($0)?["age"] as? Int) ?? 0) >= 18 }.map { Int64($0 + 1) }
        XCTAssertEqual(adults, expectedAdults)

        let rows = try database.read { db in
            try Profile.order { $0.id.asc }
                .select { $0.json.jsonExtract("$.city", as: String?.self) }.fetchAll(db)
        }
        XCTAssertEqual(rows, documents.indices.map { parsed($0)?["city"] as? String })

        let lengths = try database.read { db in
            try Profile.order { $0.id.asc }.select { $0.json.jsonArrayLength("$.tags") }
                .fetchAll(db)
        }
        XCTAssertEqual(lengths, documents.indices.map { (parsed($0)?["tags"] as? [Any])?.count })

        let types = try database.read { db in
            try Profile.filter { $0.id == 2 }.select { $0.json.jsonType() }.fetchOne(db)
        }
        XCTAssertEqual(types, "object")
        // A malformed document: json_valid tells it apart, and json_extract on it throws, not crash.
        try database.write { db in
            var profile = Profile(id: nil, json: "not json {")
            try profile.insert(db)
        }
        let valid = try database.read { db in
            try Profile.filter { $0.json.isValidJSON }.select { $0.id }.fetchAll(db).compactMap { $0 }
        }
        XCTAssertEqual(valid, documents.indices.map { Int64($0 + 1) })
        XCTAssertThrowsError(
            try database.read { db in try Profile.select { $0.json.jsonExtract("$.age", as: Int?.self) }.fetchAll(db) })
    }

    func testJSONFunctionsThrowUnsupportedOnALibraryWithoutThem() throws {
        try XCTSkipIf(LinkedSQLite.supports(.json), "SQLite \(LinkedSQLite.version) has JSON functions")
        XCTAssertThrowsError(
            try database.read { db in try Profile.filter { $0.json.isValidJSON }.fetchAll(db) }
        ) { error in
            XCTAssertEqual((error as? CofferError)?.code, .unsupportedByLibrary, "\(error)")
            XCTAssertTrue((error as? CofferError)?.message.hasPrefix("no such function: json") == true, "\(error)")
        }
        // The connection is still usable, and nothing was lost.
        XCTAssertEqual(try database.read { try Profile.fetchCount($0) }, documents.count)
    }
}
