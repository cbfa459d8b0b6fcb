import Coffer
import CofferTestSupport
import Foundation
import XCTest

@Table("chat_message")
struct ChatMessage: Codable {
    @Column(primaryKey: true) var id: Int64?
    var type: Int64
    @Column(compressed: .dictionaries(by: "type", [1: 1, 2: 2])) var content: String
    @Column(compressed: .zstd) var attachment: Data?
}

/// The ```swift blocks of Compression.md, compiled and run as written.
final class CompressionArticleTests: XCTestCase {
    private let textSamples = (0..<1000).map { "message \($0): see you at \($0 % 12) o'clock, 明天见 #\($0 % 9)" }
    private let systemSamples = (0..<1000).map { "[system] user\($0 % 50) joined the group \($0 % 7), 加入了群聊" }

    func testDeclaringTrainingReadingAndWriting() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        let textSamples = self.textSamples
        let systemSamples = self.systemSamples

        try database.write { db in
            try db.upgradeSchema(for: [ChatMessage.self])
            try db.trainCompressionDictionary(id: 1, from: textSamples)
            try db.trainCompressionDictionary(id: 2, from: systemSamples, maximumSize: 16 * 1024)
        }

        try database.write { db in
            var message = ChatMessage(id: nil, type: 1, content: "see you at 8, 明天见", attachment: nil)
            try message.insert(db)
        }
        let hits = try database.read { db in
            try ChatMessage.filter { $0.content.contains("明天") }.fetchAll(db)  // compares plain values
        }

        let texts = try database.read { db in
            try db.fetchAll(sql: "SELECT coffer_decompress(content) AS content FROM chat_message WHERE type = 1")
        }

        XCTAssertEqual(hits.map(\.content), ["see you at 8, 明天见"])
        XCTAssertEqual(texts.map { row -> String? in row["content"] }, ["see you at 8, 明天见"])
        XCTAssertEqual(try database.read { try $0.compressionDictionaryIDs() }, [1, 2])
    }

    func testRecompressingInTheBackground() async throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try await database.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE chat_message(id INTEGER PRIMARY KEY, type INTEGER NOT NULL, content TEXT NOT NULL, attachment BLOB)"
            )
            for index in 0..<1200 {
                try db.execute(
                    sql: "INSERT INTO chat_message(type, content) VALUES (1, ?)",
                    arguments: ["message \(index): " + String(repeating: "see you at the station, ", count: 4)])
            }
        }

        for try await event in database.recompressWithProgress(ChatMessage.self, batchSize: 500) {
            if case .progress(let done, let total) = event { print("\(done)/\(total) rows") }
        }

        let types = try await database.read { db in
            try db.fetchAll(sql: "SELECT DISTINCT typeof(content) FROM chat_message").map { try $0.decode(String.self, at: 0) }
        }
        let count = try await database.read { try ChatMessage.fetchCount($0) }
        XCTAssertEqual(types, ["blob"])
        XCTAssertEqual(count, 1200)
    }

    private struct InboxMessage: Codable, Sendable, Equatable {
        var sender: String
        var text: String
    }

    func testKeyValueValues() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        let recentMessages = (0..<500).map { InboxMessage(sender: "user\($0 % 20)", text: "see you at \($0 % 12), 明天见") }

        let samples = try recentMessages.map { String(decoding: try JSONEncoder().encode($0), as: UTF8.self) }
        try database.write { db in _ = try db.trainCompressionDictionary(id: 3, from: samples) }
        let inbox = try KeyValueStore(
            database: database, name: "inbox", configuration: .init(valueCompression: .dictionary(3)))
        try inbox.put(recentMessages[0], for: "m0")  // stored compressed, read back as it was put

        XCTAssertEqual(try inbox.value(InboxMessage.self, for: "m0"), recentMessages[0])
        let stored = try database.read { db in try db.fetchValue(String.self, sql: "SELECT typeof(value) FROM \"kv:inbox\"") }
        XCTAssertEqual(stored, "blob")
    }

    func testDocumentBodies() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let notes = try DocumentStore(database: database, name: "notes", bodyCompression: .zstd)
        try notes.put(["title": "Q3 review", "text": "budget, deadline, 明天下午开会 …"], for: "n1")
        let note = try notes.value(for: "n1")  // read back as it was put

        XCTAssertEqual(note, .object(["title": "Q3 review", "text": "budget, deadline, 明天下午开会 …"]))
        let rewritten = try notes.recompressBodies()  // every stored body now as `bodyCompression` writes one
        XCTAssertEqual(rewritten, 1)
    }

    func testRecompressingStoredValues() async throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        let before = try KeyValueStore(database: database, name: "inbox")
        for index in 0..<1200 {
            try await before.put(String(repeating: "see you at \(index % 12), 明天见 ", count: 8), for: "m\(index)")
        }
        let inbox = try KeyValueStore(database: database, name: "inbox", configuration: .init(valueCompression: .zstd))

        for try await event in inbox.recompressValuesWithProgress(batchSize: 500) {
            if case .progress(let done, let total) = event { print("\(done)/\(total) values") }
        }

        let types = try await database.read { db in
            try db.fetchAll(sql: "SELECT DISTINCT typeof(value) FROM \"kv:inbox\"").map { try $0.decode(String.self, at: 0) }
        }
        XCTAssertEqual(types, ["blob"])
        let value = try await inbox.value(String.self, for: "m13")
        XCTAssertEqual(value, String(repeating: "see you at 1, 明天见 ", count: 8))
    }
}
