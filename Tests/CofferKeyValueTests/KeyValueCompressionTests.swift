import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `KeyValueStore.Configuration.valueCompression`: values stored compressed (as compressed columns are) and
/// read back exactly, with their SQLite types; values written before compression was declared — Data
/// starting with the compressed format's marker bytes included — still read as written; `.off` stops
/// compressing and keeps reading.
final class KeyValueCompressionTests: XCTestCase {
    private struct Message: Codable, Equatable, Sendable {
        var sender: String
        var text: String
        var sentAt: Date
        static let sender = KeyValueIndexField<Message, String>("sender") { $0.sender }
    }

    private var directory: TemporaryDirectory!
    private var database: Database!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-kv-compression")
        database = try Database(path: directory.path("kv.db"), configuration: Configuration(encryption: .passphrase("k")))
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    private func store(_ compression: ColumnCompression?, name: String = "chat") throws -> KeyValueStore {
        try KeyValueStore(
            database: database, name: name,
            configuration: .init(cacheCostLimit: 0, indexes: [Message.sender], valueCompression: compression))
    }

    /// Generated chat messages: words from a small vocabulary, as chat repeats itself.
    private static func messages(_ count: Int) -> [Message] {
        var generator = SeededGenerator(seed: 40)
        let words = ["明天", "开会", "好的", "收到", "谢谢", "哈哈", "晚上", "吃饭", "ok", "see you", "meeting", "lunch?"]
        return (0..<count).map { index in
            let text = (0..<generator.int(in: 3...30)).map { _ in words[generator.next(upTo: words.count)] }.joined(
                separator: " ")
            return Message(
                sender: ["ann", "bob", "张三"][index % 3], text: text, sentAt: Date(timeIntervalSince1970: Double(index)))
        }
    }

    /// The bytes the store's values occupy as stored (one key's, or all).
    private func storedBytes(_ name: String, key: String? = nil) throws -> Int {
        try database.read { db in
            try db.fetchValue(
                Int.self, sql: "SELECT sum(length(CAST(value AS BLOB))) FROM \"kv:\(name)\" WHERE ?1 IS NULL OR key = ?1",
                arguments: [key.map(DatabaseValue.text) ?? .null]) ?? 0
        }
    }

    func testCompressedValuesReadBackExactlyWithTheirTypes() throws {
        let plain = try store(nil, name: "plain")
        let zstd = try store(.zstd)
        let messages = Self.messages(300)
        let longText = String(repeating: "新年快乐 happy new year! ", count: 100)
        let markerData = Data([0xC1, 0x00, 0xFF]) + Data(repeating: 7, count: 500)
        for target in [plain, zstd] {
            try target.batch { batch in
                for (index, message) in messages.enumerated() { try batch.put(message, for: "m\(index)") }
            }
            try target.put(longText, for: "text")
            try target.put(markerData, for: "marker")
            try target.put(Data([0xC2]), for: "escape")
            try target.put(42, for: "number")
            try target.put(2.5, for: "real")
        }
        for (index, message) in messages.enumerated() {
            XCTAssertEqual(try zstd.value(Message.self, for: "m\(index)"), message)
        }
        XCTAssertEqual(try zstd.value(String.self, for: "text"), longText)
        XCTAssertEqual(try zstd.value(Data.self, for: "marker"), markerData)
        XCTAssertEqual(try zstd.value(Data.self, for: "escape"), Data([0xC2]))
        XCTAssertEqual(try zstd.value(Int.self, for: "number"), 42)
        XCTAssertEqual(try zstd.value(Double.self, for: "real"), 2.5)
        // Queries on an index field decode through the same path.
        let anns = try zstd.items(
            Message.self, matching: KeyValueQuery(bucket: KeyValueStore.defaultBucket).filter(Message.sender == "ann"))
        XCTAssertEqual(anns.count, 100)
        for item in anns { XCTAssertEqual(item.value, messages[Int(item.key.dropFirst())!], item.key) }
        // Stored compressed: the long text as a compressed TEXT (0xC0), smaller; numbers as they are.
        let kinds = try database.read { db in
            try db.fetchAll(
                sql: "SELECT key, typeof(value), hex(substr(value, 1, 1)) FROM \"kv:chat\" WHERE key IN ('text', 'number')"
            )
            .map {
                "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1)) \(try $0.decode(String.self, at: 2))"
            }
        }
        XCTAssertEqual(Set(kinds), ["text blob C0", "number integer 34"])
        // A long repetitive text shrinks to a fraction; short messages shrink little without a dictionary
        // (next test), and never grow by more than the format's few header bytes.
        XCTAssertLessThan(try storedBytes("chat", key: "text"), try storedBytes("plain", key: "text") / 10)
        XCTAssertLessThanOrEqual(try storedBytes("chat"), try storedBytes("plain"))
    }

    func testADictionaryShrinksShortMessagesFurther() throws {
        let messages = Self.messages(400)
        let samples = try messages.prefix(200).map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try database.write { db in _ = try db.trainCompressionDictionary(id: 1, from: samples, maximumSize: 8 * 1024) }
        let zstd = try store(.zstd, name: "zstd")
        let dictionary = try store(.dictionary(1), name: "dict")
        for target in [zstd, dictionary] {
            try target.batch { batch in
                for (index, message) in messages.enumerated() { try batch.put(message, for: "m\(index)") }
            }
        }
        for (index, message) in messages.enumerated() where index % 7 == 0 {
            XCTAssertEqual(try dictionary.value(Message.self, for: "m\(index)"), message)
        }
        XCTAssertLessThan(try storedBytes("dict"), try storedBytes("zstd") * 3 / 4)
    }

    func testValuesWrittenBeforeCompressionReadAsWrittenAndAreEscapedOnce() throws {
        let before = try store(nil)
        let values = [Data([0xC0, 1, 2]), Data([0xC1]), Data([0xC2, 0xC2]), Data([0xBF, 0xC0]), Data()]
        for (index, data) in values.enumerated() { try before.put(data, for: "d\(index)") }
        try before.put("text", for: "t")
        for _ in 0..<2 {  // the second open must not escape again
            let compressed = try store(.zstd)
            for (index, data) in values.enumerated() {
                XCTAssertEqual(try compressed.value(Data.self, for: "d\(index)"), data, "d\(index)")
            }
            XCTAssertEqual(try compressed.value(String.self, for: "t"), "text")
        }
        // Turned off: new values are plain, the compressed ones still read.
        let compressed = try store(.zstd)
        let longText = String(repeating: "compress me ", count: 200)
        try compressed.put(longText, for: "long")
        let off = try store(.off)
        try off.put(longText, for: "long-plain")
        XCTAssertEqual(try off.value(String.self, for: "long"), longText)
        XCTAssertEqual(try off.value(String.self, for: "long-plain"), longText)
        XCTAssertEqual(try off.value(Data.self, for: "d0"), values[0])
        let types = try database.read { db in
            try db.fetchAll(sql: "SELECT key, typeof(value) FROM \"kv:chat\" WHERE key LIKE 'long%' ORDER BY key")
                .map { "\(try $0.decode(String.self, at: 0)) \(try $0.decode(String.self, at: 1))" }
        }
        XCTAssertEqual(types, ["long blob", "long-plain text"])
    }

    func testOffWritesBlobsThatLookCompressedEscapedAndReadsThemBack() throws {
        let off = try store(.off)
        let values = [
            Data([0xC0, 1, 2]), Data([0xC1]), Data([0xC2, 0xC2]), Data([0xC1, 0x00]) + Data(repeating: 9, count: 300),
        ]
        for (index, data) in values.enumerated() { try off.put(data, for: "d\(index)") }
        for (index, data) in values.enumerated() { XCTAssertEqual(try off.value(Data.self, for: "d\(index)"), data) }
        let stored = try database.read { db in
            try db.fetchAll(sql: "SELECT DISTINCT hex(substr(value, 1, 1)) FROM \"kv:chat\"").map {
                try $0.decode(String.self, at: 0)
            }
        }
        XCTAssertEqual(stored, ["C2"], "escaped, not compressed")
    }

    func testRecompressValuesCompressesEarlierValuesThenStoresThemPlainAgain() async throws {
        let messages = Self.messages(300)
        let marker = Data([0xC1, 0x00]) + Data(repeating: 3, count: 40)
        let plainBytes = try putUncompressed(messages, marker: marker)

        // The pass as a progress sequence: whole batches, then the number rewritten.
        let compressed = try store(.dictionary(2))
        var events: [ProgressEvent<Int>] = []
        for try await event in compressed.recompressValuesWithProgress(batchSize: 100) { events.append(event) }
        let done = events.compactMap { event -> Int? in if case .progress(let done, 302) = event { done } else { nil } }
        XCTAssertEqual(done, Array(stride(from: 0, to: 302, by: 100)) + [302])
        guard case .finished(let rewritten)? = events.last else { return XCTFail("no finished event") }
        XCTAssertEqual(rewritten, 302)
        try checkCompressedThenTurnedOff(compressed, messages: messages, marker: marker, plainBytes: plainBytes)
    }

    /// Puts `messages`, `marker` and a number in a store without compression and trains dictionary 2 on the
    /// messages; returns the values' stored bytes.
    private func putUncompressed(_ messages: [Message], marker: Data) throws -> Int {
        let before = try store(nil)
        try before.batch { batch in for (index, message) in messages.enumerated() { try batch.put(message, for: "m\(index)") } }
        try before.put(marker, for: "marker")
        try before.put(42, for: "number")
        let samples = try messages.prefix(200).map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try database.write { db in _ = try db.trainCompressionDictionary(id: 2, from: samples, maximumSize: 8 * 1024) }
        return try storedBytes("chat")
    }

    /// The rest of the test above: every message compressed and read back, and `.off` stores all plain.
    private func checkCompressedThenTurnedOff(_ compressed: KeyValueStore, messages: [Message], marker: Data, plainBytes: Int)
        throws
    {
        XCTAssertLessThan(try storedBytes("chat"), plainBytes / 2)
        let withDictionary =
            try database.read { db in
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \"kv:chat\" WHERE hex(substr(value, 1, 2)) = 'C102'")
            } ?? 0
        XCTAssertGreaterThanOrEqual(withDictionary, 300, "every message compressed with dictionary 2")
        for (index, message) in messages.enumerated() {
            XCTAssertEqual(try compressed.value(Message.self, for: "m\(index)"), message)
        }
        XCTAssertEqual(try compressed.value(Data.self, for: "marker"), marker)
        XCTAssertEqual(try compressed.value(Int.self, for: "number"), 42)
        let bobs = KeyValueQuery(bucket: KeyValueStore.defaultBucket).filter(Message.sender == "bob")
        XCTAssertEqual(try compressed.items(Message.self, matching: bobs).count, 100)

        // Turned off: the pass stores every value plain again (the marker escaped), and they still read.
        let off = try store(.off)
        XCTAssertEqual(try off.recompressValues(), 302)
        XCTAssertEqual(try storedBytes("chat"), plainBytes + 1, "plain again; the marker carries its escape byte")
        for (index, message) in messages.enumerated() { XCTAssertEqual(try off.value(Message.self, for: "m\(index)"), message) }
        XCTAssertEqual(try off.value(Data.self, for: "marker"), marker)
        XCTAssertEqual(try store(nil).recompressValues(), 0, "nothing declared, nothing to do")
    }

    func testSeveralDictionariesByAnotherColumnIsRefused() {
        XCTAssertThrowsError(try store(.dictionaries(by: "type", [1: 1]))) { error in
            XCTAssertEqual((error as? CofferError)?.code, .invalidConfiguration)
        }
    }
}
