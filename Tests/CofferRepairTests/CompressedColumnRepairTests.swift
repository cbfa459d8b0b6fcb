import Coffer
import CofferRepair
import Foundation
import XCTest

@Table("chat")
private struct CompressedChat: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(compressed: .dictionary(1)) var content: String
}

/// Repair copies stored values as they are: a compressed column's output holds the compressed values
/// and the dictionary table, so it reads plain through records and `coffer_decompress`.
final class CompressedColumnRepairTests: XCTestCase {
    func testRepairKeepsCompressedValuesAndTheirDictionaries() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-repair-zstd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.db").path
        let output = directory.appendingPathComponent("recovered.db").path
        let configuration = Configuration(encryption: .passphrase("pw"))
        let texts = (0..<600).map { "message \($0): see you at the station at \($0 % 12) o'clock, 车站见，不见不散 #\($0 % 7)" }
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            try db.upgradeSchema(for: [CompressedChat.self])
            try db.trainCompressionDictionary(id: 1, from: texts, maximumSize: 8 * 1024)
            try CompressedChat.insertAll(texts.map { CompressedChat(id: nil, content: $0) }, db)
        }
        let report = try database.repair(to: output)
        try database.close()
        XCTAssertEqual(report.tables["chat"], texts.count)
        XCTAssertEqual(report.tables["coffer_zstd_dictionary"], 1)

        let recovered = try Database(path: output, configuration: configuration)
        defer { try? recovered.close() }
        XCTAssertEqual(
            try recovered.read { try $0.fetchValue(String.self, sql: "SELECT DISTINCT typeof(content) FROM chat") }, "blob")
        XCTAssertEqual(try recovered.read { try CompressedChat.order { $0.id.asc }.fetchAll($0) }.map(\.content), texts)
        XCTAssertEqual(
            try recovered.read {
                try $0.fetchValue(String.self, sql: "SELECT coffer_decompress(content) FROM chat WHERE id = 7")
            },
            texts[6])
    }

    /// `coffer migrate`'s engine copies a plaintext file with compressed columns into Coffer's encrypted
    /// format: the stored values and the dictionary table as they are, readable plain afterwards.
    func testMigrateKeepsCompressedValuesAndTheirDictionaries() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-migrate-zstd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("plain.db").path
        let output = directory.appendingPathComponent("migrated.db").path
        let texts = (0..<300).map { "note \($0): the quarterly report is in the shared folder, 季度报告在共享文件夹里 \($0 % 5)" }
        let database = try Database(path: path, configuration: Configuration(encryption: .none))
        try database.write { db in
            try db.upgradeSchema(for: [CompressedChat.self])
            try db.trainCompressionDictionary(id: 1, from: texts, maximumSize: 4096)
            try CompressedChat.insertAll(texts.map { CompressedChat(id: nil, content: $0) }, db)
        }
        try database.close()

        let result = try FileMigration.run(
            file: try DatabaseFile(path: path, key: .none), output: output, encryption: .passphrase("k"))
        XCTAssertTrue(result.verified, "\(result.checks)")
        let migrated = try Database(path: output, configuration: Configuration(encryption: .passphrase("k")))
        defer { try? migrated.close() }
        XCTAssertEqual(try migrated.read { try $0.compressionDictionaryIDs() }, [1])
        XCTAssertEqual(try migrated.read { try CompressedChat.order { $0.id.asc }.fetchAll($0) }.map(\.content), texts)
    }
}
