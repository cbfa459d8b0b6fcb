import Coffer
import CofferTestSupport
import Foundation
import XCTest

@Table("chat")
private struct CompressedChat: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(compressed: .dictionary(1)) var content: String
}

/// `coffer repair` on a database whose column is compressed with a trained dictionary: the output keeps
/// the compressed values and the dictionary table, so every salvaged row reads back as the text it held,
/// and the rows of a destroyed leaf are missing rather than wrong.
final class CompressedRepairCommandTests: XCTestCase {
    func testRepairOfACompressedTableReadsBackExactly() throws {
        let directory = try TemporaryDirectory()
        try "pw\n".write(toFile: directory.path("pw"), atomically: true, encoding: .utf8)
        let input = directory.path("chat.db")
        let texts = (0..<2000).map {
            "message \($0): 明天下午三点在车站见，不见不散 — see you at the station at \($0 % 12), bring the \($0 % 7) tickets"
        }
        let database = try Database(path: input, configuration: Configuration(encryption: .passphrase("pw")))
        try database.write { db in
            try db.upgradeSchema(for: [CompressedChat.self])
            try db.trainCompressionDictionary(id: 1, from: texts, maximumSize: 4096)
            try CompressedChat.insertAll(texts.map { CompressedChat(id: nil, content: $0) }, db)
        }
        try database.close()
        // The last page: the newest leaf of `chat`, written after the dictionary.
        let size = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: input)[.size] as? Int)
        try FileScan.zeroPage(input, page: size / 4096)
        let before = try Data(contentsOf: URL(fileURLWithPath: input))

        let output = directory.path("recovered.db")
        let result = try Shell.run(
            Shell.cofferExecutable, ["repair", input, "-o", output, "--passphrase-file", directory.path("pw")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: input)), before, "INPUT is never modified")

        let recovered = try Database(path: output, configuration: Configuration(encryption: .passphrase("pw")))
        defer { try? recovered.close() }
        let rows = try recovered.read { try CompressedChat.order { $0.id.asc }.fetchAll($0) }
        XCTAssertGreaterThan(rows.count, 1500)
        XCTAssertLessThan(rows.count, texts.count, "a zeroed leaf's rows cannot come back")
        for row in rows {
            let id = try XCTUnwrap(row.id)
            XCTAssertEqual(row.content, texts[Int(id) - 1], "row \(id)")
        }
        XCTAssertEqual(try recovered.read { try $0.compressionDictionaryIDs() }, [1])
        XCTAssertEqual(
            try recovered.read { try $0.fetchValue(String.self, sql: "SELECT DISTINCT typeof(content) FROM chat") }, "blob")
    }
}
