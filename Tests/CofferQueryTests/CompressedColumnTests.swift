import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Columns declared `@Column(compressed:)`: stored compressed, read plain by every typed path, read by
/// raw SQL through `coffer_decompress`, and never decoded with a dictionary the database no longer holds.
final class CompressedColumnTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var database: Database!
    private let configuration = Configuration(encryption: .passphrase("zstd"))
    private var path: String { directory.path("chat.db") }

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-compression")
        database = try Database(path: path, configuration: configuration)
        _ = try database.write { db in try db.upgradeSchema(for: [ChatLine.self]) }
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    private func trainDictionaries() throws {
        try database.write { db in
            try db.trainCompressionDictionary(id: 1, from: chatSamples(count: 2000), maximumSize: 16 * 1024)
            try db.trainCompressionDictionary(
                id: 2, from: chatSamples(count: 2000, seed: 5).map { "[system] " + $0 }, maximumSize: 8 * 1024)
        }
    }

    private func insert(_ lines: [ChatLine]) throws {
        try database.write { db in
            for var line in lines { try line.insert(db) }
        }
    }

    func testRecordsReadAndFilterPlainValuesWhileTheyAreStoredCompressed() throws {
        try trainDictionaries()
        let texts = chatSamples(count: 300, seed: 9)
        try insert(texts.enumerated().map { ChatLine(id: nil, kind: Int64($0 % 3), content: $1, attachment: nil) })

        let fetched = try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(fetched.map(\.content), texts)
        // Stored: compressed TEXT (0xC0) naming the dictionary its kind picks (kind 0: none), or TEXT as it was.
        let stored = try database.read { db in
            try db.fetchAll(sql: "SELECT kind, typeof(content), hex(substr(content, 1, 2)), length(content) FROM chat_line")
        }
        var storedBytes = 0
        var compressed = 0
        for row in stored {
            let kind = try row.decode(Int.self, at: 0)
            if try row.decode(String.self, at: 1) == "blob" {
                XCTAssertEqual(try row.decode(String.self, at: 2), "C0" + ["00", "01", "02"][kind])
                compressed += 1
            }
            storedBytes += try row.decode(Int.self, at: 3)
        }
        let plainBytes = texts.reduce(0) { $0 + $1.utf8.count }
        XCTAssertGreaterThan(compressed, 200)
        XCTAssertLessThan(storedBytes, plainBytes * 3 / 4, "stored \(storedBytes) of \(plainBytes) bytes")

        // Typed filters compare plain values.
        let target = texts[42]
        let sameText = texts.indices.filter { texts[$0] == target }.map { Int64($0 + 1) }
        XCTAssertEqual(try database.read { try ChatLine.filter { $0.content == target }.fetchAll($0) }.map(\.id), sameText)
        let matching = try database.read { try ChatLine.filter { $0.content.contains("季度报告") }.fetchCount($0) }
        XCTAssertEqual(matching, texts.filter { $0.contains("季度报告") }.count)
        XCTAssertGreaterThan(matching, 0)
        // Updates compress too; raw SQL reads plain values through coffer_decompress.
        try database.write { db in
            _ = try ChatLine.filter { $0.id == 43 }.updateAll(db) { [$0.content.set(to: target + " (edited)")] }
        }
        let raw = try database.read { db in
            try db.fetchValue(String.self, sql: "SELECT coffer_decompress(content) FROM chat_line WHERE id = 43")
        }
        XCTAssertEqual(raw, target + " (edited)")
        XCTAssertEqual(try database.read { try ChatLine.fetchOne($0, id: 43) }?.content, target + " (edited)")
    }

    func testValuesThatDoNotShrinkStayAsTheyAreAndBlobsStayUnambiguous() throws {
        let incompressible = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 97 &+ 13) })
        let lines = [
            ChatLine(id: 1, kind: 0, content: "hi", attachment: Data([0xC0, 0x01, 0x02])),
            ChatLine(id: 2, kind: 0, content: "", attachment: Data([0xC2])),
            ChatLine(id: 3, kind: 0, content: "ok", attachment: incompressible),
            ChatLine(id: 4, kind: 0, content: String(repeating: "好", count: 400), attachment: Data(repeating: 0xC1, count: 4000)),
            ChatLine(id: 5, kind: 0, content: "x", attachment: nil),
        ]
        try insert(lines)
        XCTAssertEqual(try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }, lines)
        let stored = try database.read { db in
            try db.fetchAll(sql: "SELECT typeof(content), typeof(attachment), hex(attachment) FROM chat_line ORDER BY id")
                .map {
                    [try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1), try $0.decode(String.self, at: 2)]
                }
        }
        XCTAssertEqual(stored[0], ["text", "blob", "C2C00102"], "an app's blob that looks compressed is escaped")
        XCTAssertEqual(stored[1], ["text", "blob", "C2C2"])
        XCTAssertEqual(stored[2], ["text", "blob", incompressible.map { String(format: "%02X", $0) }.joined()])
        XCTAssertEqual(stored[3][0...1], ["blob", "blob"])
        XCTAssertTrue(stored[3][2].hasPrefix("C100"), "compressed BLOB, no dictionary")
        XCTAssertEqual(stored[4], ["text", "null", ""])
    }

    func testOffStoresBlobsThatLookCompressedEscapedAndRecompressStoresEveryValuePlain() throws {
        let marker = Data([0xC1, 0x00]) + Data(repeating: 5, count: 2000)
        try insert([ChatLine(id: 1, kind: 0, content: String(repeating: "好", count: 400), attachment: marker)])
        try database.write { db in
            var line = UncompressedChatLine(id: 2, kind: 0, content: "written plain", attachment: Data([0xC0, 0x01, 0x02]))
            try line.insert(db)
            _ = try UncompressedChatLine.filter { $0.id == 2 }.updateAll(db) { [$0.attachment.set(to: Data([0xC2]))] }
        }
        let expected = [
            UncompressedChatLine(id: 1, kind: 0, content: String(repeating: "好", count: 400), attachment: marker),
            UncompressedChatLine(id: 2, kind: 0, content: "written plain", attachment: Data([0xC2])),
        ]
        XCTAssertEqual(try database.read { try UncompressedChatLine.order { $0.id.asc }.fetchAll($0) }, expected)
        XCTAssertEqual(try database.recompress(UncompressedChatLine.self), 2)
        XCTAssertEqual(try database.read { try UncompressedChatLine.order { $0.id.asc }.fetchAll($0) }, expected)
        let stored = try database.read { db in
            try db.fetchAll(sql: "SELECT typeof(content), hex(substr(attachment, 1, 3)) FROM chat_line ORDER BY id")
                .map { [try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1)] }
        }
        XCTAssertEqual(stored, [["text", "C2C100"], ["text", "C2C2"]], "plain, the blobs that look compressed escaped")
    }

    /// zstd's own command-line tool decodes a stored value: the header, then the frame with its magic
    /// number put back, with the dictionary read from the database.
    func testZstdsOwnToolDecodesAStoredValue() throws {
        try trainDictionaries()
        let text = chatSamples(count: 5, seed: 11)[3] + " 这是用字典压缩的一条消息"
        try insert([ChatLine(id: nil, kind: 1, content: text, attachment: nil)])
        let (value, dictionary) = try database.read { db in
            (
                try XCTUnwrap(db.fetchValue(Data.self, sql: "SELECT content FROM chat_line")),
                try XCTUnwrap(db.fetchValue(Data.self, sql: "SELECT dict FROM coffer_zstd_dictionary WHERE id = 1"))
            )
        }
        XCTAssertEqual(Array(value.prefix(2)), [0xC0, 0x01])
        let frame = Data([0x28, 0xB5, 0x2F, 0xFD]) + value.dropFirst(2)
        try frame.write(to: URL(fileURLWithPath: directory.path("value.zst")))
        try dictionary.write(to: URL(fileURLWithPath: directory.path("dictionary")))
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zstd") else {
            throw XCTSkip("the zstd command-line tool is not installed")
        }
        let result = try Shell.run(
            "/usr/bin/zstd", ["-d", "-q", "-c", "-D", directory.path("dictionary"), directory.path("value.zst")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(result.stdout, text)
    }

    func testAValueWhoseDictionaryIsLostIsReportedNeverReturned() throws {
        try trainDictionaries()
        try insert([ChatLine(id: nil, kind: 1, content: chatSamples(count: 1)[0] + " and more", attachment: nil)])
        try database.write { try $0.execute(sql: "DELETE FROM coffer_zstd_dictionary WHERE id = 1") }
        try database.close()
        database = try Database(path: path, configuration: configuration)  // no connection has it cached
        XCTAssertThrowsError(try database.read { try ChatLine.fetchAll($0) }) { error in
            XCTAssertTrue("\(error)".contains("dictionary 1 is missing"), "\(error)")
        }
        XCTAssertThrowsError(
            try database.read { try $0.fetchAll(sql: "SELECT coffer_decompress(content) FROM chat_line") })
    }

    func testARolledBackDictionaryNeverDecodesTheValuesOfTheOneStoredAfterIt() throws {
        struct Abort: Error {}
        XCTAssertThrowsError(
            try database.write { db in
                try db.trainCompressionDictionary(id: 1, from: chatSamples(count: 2000, seed: 1), maximumSize: 4096)
                var line = ChatLine(id: nil, kind: 1, content: "rolled back with its dictionary, rolled back", attachment: nil)
                try line.insert(db)
                XCTAssertEqual(try ChatLine.fetchAll(db).map(\.content), [line.content])  // the writer digests it
                throw Abort()
            })
        XCTAssertEqual(try database.read { try $0.compressionDictionaryIDs() }, [])
        XCTAssertEqual(try database.read { try ChatLine.fetchCount($0) }, 0)

        let texts = chatSamples(count: 50, seed: 3)
        try database.write { db in
            let other = chatSamples(count: 2000, seed: 77).map { $0.uppercased() + " // OTHER" }
            try db.trainCompressionDictionary(id: 1, from: other, maximumSize: 4096)
            for text in texts {
                var line = ChatLine(id: nil, kind: 1, content: text, attachment: nil)
                try line.insert(db)
            }
            XCTAssertEqual(try ChatLine.order { $0.id.asc }.fetchAll(db).map(\.content), texts)
        }
        XCTAssertEqual(try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }.map(\.content), texts)
        XCTAssertThrowsError(try database.write { try $0.addCompressionDictionary(Data("another".utf8), id: 1) }) { error in
            XCTAssertEqual((error as? CofferError)?.code, .compressionFailed)
        }
        XCTAssertThrowsError(try database.write { try $0.trainCompressionDictionary(id: 3, from: ["too", "few"]) }) { error in
            XCTAssertEqual((error as? CofferError)?.code, .compressionFailed)
        }
    }

    func testObservationSeesPlainValues() async throws {
        let contents = database.observe { db in try ChatLine.order { $0.id.asc }.fetchAll(db).map(\.content) }
        let texts = chatSamples(count: 3, seed: 21).map { $0 + " " + String(repeating: "重复的内容 ", count: 20) }
        var seen: [[String]] = []
        for try await value in contents {
            seen.append(value)
            if value.count == texts.count { break }
            let next = texts[value.count]
            try await database.write { db in
                var line = ChatLine(id: nil, kind: 0, content: next, attachment: nil)
                try line.insert(db)
            }
        }
        XCTAssertEqual(seen, (0...texts.count).map { Array(texts.prefix($0)) })
        let types = try await database.read {
            try $0.fetchAll(sql: "SELECT typeof(content) FROM chat_line").map { try $0.decode(String.self, at: 0) }
        }
        XCTAssertEqual(types, ["blob", "blob", "blob"])
    }
}
