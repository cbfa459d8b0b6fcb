import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `DocumentStore(…, bodyCompression:)`: bodies stored compressed and read back exactly through every read
/// (by key, by attribute query, full-text search, delete by query); attributes stay plain and queries
/// find the same documents; bodies written before compression was declared still read, and `.off` stops
/// compressing and keeps reading.
final class DocumentCompressionTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var database: Database!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-document-compression")
        database = try Database(path: directory.path("d.db"), configuration: Configuration(encryption: .passphrase("d")))
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    /// Notes that repeat themselves, as an app's documents do: a title, tags and a body of common words.
    private static func notes(_ count: Int, words range: ClosedRange<Int> = 40...120) -> [(String, Document)] {
        var generator = SeededGenerator(seed: 41)
        let words = ["会议", "纪要", "项目", "进度", "meeting", "notes", "deadline", "review", "明天", "下午", "budget"]
        return (0..<count).map { index in
            let text = (0..<generator.int(in: range)).map { _ in words[generator.next(upTo: words.count)] }
                .joined(separator: " ")
            let document: Document = [
                "title": .string("note \(index % 7)"), "tags": [.string(words[index % words.count]), "work"],
                "text": .string(text), "rank": .int(Int64(index)),
            ]
            return ("n\(index)", document)
        }
    }

    /// The stored bodies' total bytes, as SQLite holds them.
    private func storedBytes(_ store: String) throws -> Int {
        try database.read { db in
            try db.fetchValue(Int.self, sql: "SELECT total(length(body)) FROM \"doc:\(store)\"") ?? 0
        }
    }

    func testCompressedBodiesReadBackThroughEveryRead() throws {
        let notes = Self.notes(300)
        let plain = try DocumentStore(database: database, name: "plain")
        let packed = try DocumentStore(database: database, name: "packed", bodyCompression: .zstd)
        for store in [plain, packed] {
            try store.batch { batch in for (key, note) in notes { try batch.put(note, for: key) } }
            try store.enableFullTextSearch(on: "text")
        }
        XCTAssertLessThan(try storedBytes("packed"), try storedBytes("plain") / 2, "bodies shrink")
        let markers = try database.read { db in
            try db.fetchAll(sql: "SELECT DISTINCT substr(hex(body), 1, 2) FROM \"doc:packed\"").map { $0[0] }
        }
        XCTAssertEqual(markers, [.text("C1")], "every stored body is in the compressed BLOB form")
        for (key, note) in notes.prefix(50) { XCTAssertEqual(try packed.value(for: key), .object(note)) }
        let query = DocumentQuery(DocumentField("title") == "note 3")
        XCTAssertEqual(try packed.keys(matching: query), try plain.keys(matching: query))
        XCTAssertEqual(
            try packed.documents(matching: query).map(\.value), try plain.documents(matching: query).map(\.value))
        let found = try packed.search(matching: .term("deadline"), limit: 400)
        XCTAssertEqual(found.map(\.key), try plain.search(matching: .term("deadline"), limit: 400).map(\.key))
        XCTAssertEqual(found.first?.value, try plain.search(matching: .term("deadline"), limit: 1).first?.value)
        XCTAssertEqual(try packed.delete(matching: query), try plain.delete(matching: query))
        XCTAssertEqual(try packed.count(), try plain.count())
    }

    func testADictionaryTrainedOnTheDocumentsJSONShrinksSmallBodiesMore() throws {
        let notes = Self.notes(400, words: 3...12)
        let samples = notes.prefix(300).map { _, note in
            ["title", "text"].compactMap { note[$0].flatMap { if case .string(let text) = $0 { text } else { nil } } }
                .joined(separator: " ") + " work"
        }
        try database.write { db in _ = try db.trainCompressionDictionary(id: 5, from: samples, maximumSize: 8 * 1024) }
        let zstd = try DocumentStore(database: database, name: "zstd", bodyCompression: .zstd)
        let dictionary = try DocumentStore(database: database, name: "dict", bodyCompression: .dictionary(5))
        for store in [zstd, dictionary] {
            try store.batch { batch in for (key, note) in notes { try batch.put(note, for: key) } }
        }
        XCTAssertLessThan(try storedBytes("dict"), try storedBytes("zstd"))
        for (key, note) in notes.suffix(20) { XCTAssertEqual(try dictionary.value(for: key), .object(note)) }
    }

    func testBodiesWrittenBeforeOrAfterCompressionAllRead() throws {
        let notes = Self.notes(40)
        try DocumentStore(database: database, name: "n").batch { batch in
            for (key, note) in notes.prefix(20) { try batch.put(note, for: key) }
        }
        let compressed = try DocumentStore(database: database, name: "n", bodyCompression: .zstd)
        for (key, note) in notes.suffix(20) { try compressed.put(note, for: key) }
        let off = try DocumentStore(database: database, name: "n", bodyCompression: .off)
        try off.put(notes[0].1, for: "rewritten")
        for (key, note) in notes { XCTAssertEqual(try off.value(for: key), .object(note)) }
        let kinds = try database.read { db in
            try db.fetchAll(sql: "SELECT substr(hex(body), 1, 2) FROM \"doc:n\" ORDER BY id").map { $0[0] }
        }
        let expected = Array(repeating: "01", count: 20) + Array(repeating: "C1", count: 20) + ["01"]
        XCTAssertEqual(kinds, expected.map { DatabaseValue.text($0) })
    }

    func testRecompressBodiesCompressesEarlierBodiesThenStoresThemPlainAgain() async throws {
        let notes = Self.notes(230)
        try DocumentStore(database: database, name: "n").batch { batch in
            for (key, note) in notes { try batch.put(note, for: key) }
        }
        let plainBytes = try storedBytes("n")
        let packed = try DocumentStore(database: database, name: "n", bodyCompression: .zstd)
        try packed.enableFullTextSearch(on: "text")
        let query = DocumentQuery(DocumentField("title") == "note 3")
        let (keysBefore, foundBefore) = (
            try packed.keys(matching: query), try packed.search(matching: .term("budget")).map(\.key)
        )

        // The pass as a progress sequence: whole batches, then the number rewritten.
        var events: [ProgressEvent<Int>] = []
        for try await event in packed.recompressBodiesWithProgress(batchSize: 50) { events.append(event) }
        let done = events.compactMap { event -> Int? in if case .progress(let done, 230) = event { done } else { nil } }
        XCTAssertEqual(done, Array(stride(from: 0, to: 230, by: 50)) + [230])
        guard case .finished(let rewritten)? = events.last else { return XCTFail("no finished event") }
        XCTAssertEqual(rewritten, 230)
        XCTAssertLessThan(try storedBytes("n"), plainBytes / 2)
        XCTAssertEqual(try bodyMarkers("n"), ["C1"])
        for (key, note) in notes { XCTAssertEqual(try packed.value(for: key), .object(note)) }
        XCTAssertEqual(try packed.keys(matching: query), keysBefore)
        XCTAssertEqual(try packed.search(matching: .term("budget")).map(\.key), foundBefore)

        // Turned off: the pass stores every body plain again, and a store without compression reads them.
        XCTAssertEqual(try DocumentStore(database: database, name: "n", bodyCompression: .off).recompressBodies(), 230)
        XCTAssertEqual(try storedBytes("n"), plainBytes)
        XCTAssertEqual(try bodyMarkers("n"), ["01"])
        let plain = try DocumentStore(database: database, name: "n")
        for (key, note) in notes { XCTAssertEqual(try plain.value(for: key), .object(note)) }
        XCTAssertEqual(try plain.recompressBodies(), 0, "nothing declared, nothing to do")
        XCTAssertEqual(try pendingPasses(), 0)
    }

    /// The passes that have not finished (rows of `coffer_recompression`).
    private func pendingPasses() throws -> Int {
        try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM coffer_recompression") } ?? -1
    }

    /// The distinct first bytes of the stored bodies, in hex.
    private func bodyMarkers(_ store: String) throws -> [String] {
        try database.read { db in
            try db.fetchAll(sql: "SELECT DISTINCT substr(hex(body), 1, 2) FROM \"doc:\(store)\" ORDER BY 1")
                .map { try $0.decode(String.self, at: 0) }
        }
    }

    func testDictionariesByColumnIsRefused() {
        XCTAssertThrowsError(
            try DocumentStore(database: database, name: "x", bodyCompression: .dictionaries(by: "type", [1: 1]))
        ) { error in XCTAssertEqual((error as? CofferError)?.code, .invalidConfiguration) }
    }
}
