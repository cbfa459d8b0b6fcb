import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `insertAll` of a type with compressed columns compresses each chunk of rows on a second thread while
/// the writer inserts the one before: the stored bytes must be exactly what one-by-one inserts store
/// through `coffer_compress`, a failure must roll every chunk back, and the second thread must be used.
final class CompressionAheadTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private let configuration = Configuration(encryption: .passphrase("ahead"))

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        directory = nil
        super.tearDown()
    }

    override func setUpWithError() throws { directory = try TemporaryDirectory("coffer-compression-ahead") }

    /// A database with `chat_line` and dictionaries 1 and 2 (the same bytes in every database).
    private func makeDatabase(_ name: String, dictionaries: [Data]) throws -> Database {
        let database = try Database(path: directory.path(name), configuration: configuration)
        try database.write { db in
            try db.upgradeSchema(for: [ChatLine.self])
            for (offset, dictionary) in dictionaries.enumerated() { try db.addCompressionDictionary(dictionary, id: offset + 1) }
        }
        return database
    }

    private func trainedDictionaries() throws -> [Data] {
        [
            try Connection.trainDictionary(from: chatSamples(count: 2000).map { Array($0.utf8) }, maximumSize: 16 * 1024),
            try Connection.trainDictionary(
                from: chatSamples(count: 2000, seed: 5).map { Array(("[system] " + $0).utf8) }, maximumSize: 8 * 1024),
        ]
    }

    /// Lines of every shape a stored value can take: compressible text of each dictionary (kind 3 and
    /// -1 pick none), text that does not shrink, empty text; attachments NULL, empty, compressible,
    /// random, and random beginning with a compressed value's marker (stored escaped).
    private func lines(_ count: Int, seed: UInt64) -> [ChatLine] {
        var random = SeededGenerator(seed: seed)
        let texts = chatSamples(count: count, seed: Int(seed))
        return (0..<count).map { index in
            var content = texts[index]
            switch random.next() % 10 {
            case 0:
                content = String((0..<(random.next() % 40)).map { _ in Character(UnicodeScalar(UInt8(33 + random.next() % 90))) })
            case 1: content = ""
            default: break
            }
            var attachment: Data?
            switch random.next() % 6 {
            case 0: attachment = nil
            case 1: attachment = Data()
            case 2: attachment = Data(String(repeating: content + " ", count: 4).utf8)
            case 3: attachment = Data((0..<(1 + random.next() % 300)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            default:
                attachment = Data(
                    [0xC0 + UInt8(random.next() % 3)]
                        + (0..<(random.next() % 50)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
            let kinds: [Int64] = [0, 1, 1, 2, 3, -1]
            return ChatLine(id: nil, kind: kinds[Int(random.next() % 6)], content: content, attachment: attachment)
        }
    }

    private func storedRows(_ database: Database) throws -> [[String]] {
        try database.read { db in
            try db.fetchAll(
                sql:
                    "SELECT id, kind, typeof(content), hex(content), typeof(attachment), hex(attachment) FROM chat_line ORDER BY id"
            ).map { row in try (0..<6).map { try row.decode(String?.self, at: $0) ?? "NULL" } }
        }
    }

    func testABatchInsertStoresExactlyWhatOneByOneInsertsStore() throws {
        let dictionaries = try trainedDictionaries()
        let batch = try makeDatabase("batch.db", dictionaries: dictionaries)
        defer { try? batch.close() }
        let single = try makeDatabase("single.db", dictionaries: dictionaries)
        defer { try? single.close() }
        let written = lines(3_000, seed: 40)

        // Batches of several sizes (a lazy sequence among them): one row, less than a chunk, many chunks.
        try batch.write { db in
            try ChatLine.insertAll(written[0..<1], db)
            try ChatLine.insertAll(written[1..<11], db)
            try ChatLine.insertAll(written[11..<1_000].lazy.map { $0 }, db)
            try ChatLine.insertAll(written[1_000...], db)
        }
        try single.write { db in
            for var line in written { try line.insert(db) }
        }
        let stored = try storedRows(batch)
        XCTAssertEqual(stored.count, written.count)
        XCTAssertEqual(stored, try storedRows(single))
        // Every shape occurred: compressed text of each dictionary, compressed and escaped blobs.
        let prefixes = Set(stored.map { String($0[3].prefix(4)) } + stored.map { String($0[5].prefix(4)) })
        for prefix in ["C000", "C001", "C002", "C100", "C2C0", "C2C1", "C2C2"] {
            XCTAssertTrue(prefixes.contains(prefix), "no stored value begins with \(prefix)")
        }
        let fetched = try batch.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(fetched.map(\.content), written.map(\.content))
        XCTAssertEqual(fetched.map(\.attachment), written.map(\.attachment))

        let counts = try batch.write { db in db.compressionAheadCounts }
        XCTAssertEqual(counts.values, 2 * written.count, "two compressed columns a row")
        if ProcessInfo.processInfo.activeProcessorCount > 1 {
            XCTAssertGreaterThan(counts.byHelper, 0, "the second thread compressed no value of \(counts.values)")
        }
    }

    func testAFailingBatchInsertRollsBackEveryChunkAndTheNextOneWorks() throws {
        let database = try makeDatabase("fail.db", dictionaries: try trainedDictionaries())
        defer { try? database.close() }
        var written = lines(1_000, seed: 41)
        for index in written.indices { written[index].id = Int64(index + 1) }
        var duplicated = written
        duplicated[700].id = 5
        XCTAssertThrowsError(try database.write { db in try ChatLine.insertAll(duplicated, db) }) { error in
            XCTAssertEqual((error as? CofferError)?.code.primary, .constraint)
        }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM chat_line") }, 0)
        _ = try database.write { db in try ChatLine.insertAll(written, db) }
        let fetched = try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(fetched, written)
    }

    /// The dictionary a `.dictionaries` column picks, computed in Swift for a batch insert, against
    /// SQLite's own `CASE` (what one-row inserts evaluate) for values of every type.
    func testThePickedDictionaryMatchesSQLitesCase() throws {
        let database = try makeDatabase("case.db", dictionaries: [])
        defer { try? database.close() }
        let compression = ColumnCompression.dictionaries(by: "kind", [0: 7, 1: 1, 2: 2, -3: 9], otherwise: 4)
        let pickers: [DatabaseValue] = [
            .integer(0), .integer(1), .integer(2), .integer(3), .integer(-3), .real(1.0), .real(-0.0), .real(1.5),
            .real(-3.0), .real(1e300), .real(.nan), .text("1"), .text(" 2"), .blob(Data([1])), .null,
        ]
        for picker in pickers {
            let sql = "SELECT CASE ? WHEN 0 THEN 7 WHEN 1 THEN 1 WHEN 2 THEN 2 WHEN -3 THEN 9 ELSE 4 END"
            let expected = try database.read { try $0.fetchValue(Int.self, sql: sql, arguments: [picker]) }
            XCTAssertEqual(compression.dictionaryID(picker: picker).map(Int.init), expected, "picker \(picker)")
        }
        XCTAssertNil(ColumnCompression.off.dictionaryID(picker: nil))
        XCTAssertEqual(ColumnCompression.zstd.dictionaryID(picker: nil), 0)
        XCTAssertEqual(ColumnCompression.dictionary(Int(Int32.max) + 1).dictionaryID(picker: nil), 0)
    }

    // MARK: Killed mid-batch

    private static let pathVariable = "COFFER_COMPRESSION_AHEAD_KILL_PATH"
    private static let killBatchRows = 200

    /// The rows of batch `batch` of the kill test, their ids assigned.
    private func killBatch(_ batch: Int) -> [ChatLine] {
        var rows = lines(Self.killBatchRows, seed: UInt64(1_000 + batch))
        for index in rows.indices { rows[index].id = Int64(batch * Self.killBatchRows + index + 1) }
        return rows
    }

    /// The child's side: inserts batch after batch with `insertAll` (each its own transaction, compressed
    /// on two threads), printing after each commit, until the parent kills it.
    func testHelperInsertsBatchesUntilKilled() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.pathVariable] else { return }
        let database = try Database(path: path, configuration: configuration)
        for batch in 0..<10_000 {
            let rows = killBatch(batch)
            _ = try database.write { db in try ChatLine.insertAll(rows, db) }
            FileHandle.standardOutput.write(Data("committed \(batch + 1)\n".utf8))
        }
    }

    func testAKillDuringBatchInsertsLeavesWholeBatchesStoredAsOneByOneInsertsStoreThem() throws {
        #if os(Linux)
        let dictionaries = try trainedDictionaries()
        let path = directory.path("killed.db")
        try makeDatabase("killed.db", dictionaries: dictionaries).close()
        var reported = 0
        let end = try ChildKill.run(
            executable: CommandLine.arguments[0],
            arguments: ["CofferQueryTests.CompressionAheadTests/testHelperInsertsBatchesUntilKilled"],
            environment: [Self.pathVariable: path]
        ) { line in
            guard line.hasPrefix("committed "), let count = Int(line.dropFirst(10)) else { return false }
            reported = count
            return count >= 8
        }
        XCTAssertTrue(end.killed, "the child was killed, not finished")

        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        XCTAssertEqual(try database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        let rows = try XCTUnwrap(database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM chat_line") })
        XCTAssertEqual(rows % Self.killBatchRows, 0, "whole batches only")
        let batches = rows / Self.killBatchRows
        XCTAssertGreaterThanOrEqual(batches, reported, "every reported commit is durable")
        let expected = (0..<batches).flatMap { killBatch($0) }
        XCTAssertEqual(try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }, expected)
        // Stored exactly as one-by-one inserts store the same rows.
        let single = try makeDatabase("killed-single.db", dictionaries: dictionaries)
        defer { try? single.close() }
        try single.write { db in
            for var line in expected { try line.insert(db) }
        }
        XCTAssertEqual(try storedRows(database), try storedRows(single))
        // The next batch goes in.
        _ = try database.write { db in try ChatLine.insertAll(killBatch(batches), db) }
        XCTAssertEqual(
            try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM chat_line") }, rows + Self.killBatchRows)
        #else
        throw XCTSkip("the child process is the xctest binary on Linux")
        #endif
    }
}
