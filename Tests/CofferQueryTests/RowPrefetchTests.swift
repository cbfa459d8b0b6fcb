import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A message of every column kind, its text and attachment compressed: `fetchAll` reads it ahead on a
/// second thread past the first 64 rows.
@Table("prefetch_message")
struct PrefetchMessage: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var kind: Int64
    var score: Double?
    @Column(compressed: .dictionary(1)) var body: String
    @Column(compressed: .zstd) var attachment: Data?
    var note: String?
}

/// The same table read through Codable's keyed container (a hand-written `init(from:)`), the path every
/// record type `@Table` cannot generate a positional reader for takes.
@Table("prefetch_message")
struct CodablePrefetchMessage: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var kind: Int64
    var score: Double?
    @Column(compressed: .dictionary(1)) var body: String
    @Column(compressed: .zstd) var attachment: Data?
    var note: String?

    enum CodingKeys: String, CodingKey { case id, kind, score, body, attachment, note }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decodeIfPresent(Int64.self, forKey: .id)
        kind = try container.decode(Int64.self, forKey: .kind)
        score = try container.decodeIfPresent(Double.self, forKey: .score)
        body = try container.decode(String.self, forKey: .body)
        attachment = try container.decodeIfPresent(Data.self, forKey: .attachment)
        note = try container.decodeNil(forKey: .note) ? nil : try container.decode(String.self, forKey: .note)
    }
}

/// `fetchAll` of a record with compressed columns steps its statement on a second thread and decodes
/// copies of the rows: it must return exactly what reading each row in place returns, in order, for every
/// shape and size of value, end a fetch cleanly on a step's or a decode's error, and leave the connection
/// to the next statement.
final class RowPrefetchTests: XCTestCase {
    private var directory: TemporaryDirectory!

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        directory = nil
        super.tearDown()
    }

    override func setUpWithError() throws { directory = try TemporaryDirectory("coffer-row-prefetch") }

    private func makeDatabase(_ name: String = "prefetch.db") throws -> Database {
        let database = try Database(path: directory.path(name), configuration: Configuration(encryption: .passphrase("ahead")))
        try database.write { db in
            try db.upgradeSchema(for: [PrefetchMessage.self])
            try db.addCompressionDictionary(
                try Connection.trainDictionary(from: chatSamples(count: 2000).map { Array($0.utf8) }, maximumSize: 16 * 1024),
                id: 1)
        }
        return database
    }

    /// Messages of every shape: compressible and incompressible text, empty text, NULL and empty and
    /// random attachments, NULL scores and notes, and every 500th a body of 300 KiB (a batch ends early
    /// on bytes).
    private func messages(_ count: Int, seed: UInt64) -> [PrefetchMessage] {
        var random = SeededGenerator(seed: seed)
        let texts = chatSamples(count: count, seed: Int(seed))
        return (0..<count).map { index in
            var body = texts[index]
            switch random.next() % 8 {
            case 0:
                body = String((0..<(random.next() % 40)).map { _ in Character(UnicodeScalar(UInt8(33 + random.next() % 90))) })
            case 1: body = ""
            default: break
            }
            if index % 500 == 499 { body = String(repeating: body + " 长消息 ", count: 300 * 1024 / (body.utf8.count + 11) + 1) }
            var attachment: Data?
            switch random.next() % 5 {
            case 0: attachment = nil
            case 1: attachment = Data()
            case 2: attachment = Data(String(repeating: body.prefix(50) + " ", count: 3).utf8)
            case 3:
                // Incompressible, beginning with a stored value's marker: stored escaped.
                attachment = Data(
                    [0xC0 + UInt8(random.next() % 3)]
                        + (0..<(1 + random.next() % 60)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            default: attachment = Data((0..<(1 + random.next() % 200)).map { _ in UInt8(truncatingIfNeeded: random.next()) })
            }
            let score: Double? = random.next() % 5 == 0 ? nil : Double(random.next() % 10_000) / 7
            let note: String? = random.next() % 3 == 0 ? nil : "note \(index)"
            return PrefetchMessage(
                id: nil, kind: Int64(random.next() % 5), score: score, body: body, attachment: attachment, note: note)
        }
    }

    private func insert(_ rows: [PrefetchMessage], into database: Database) throws -> [PrefetchMessage] {
        try database.write { db in
            try rows.map { row in
                var row = row
                try row.insert(db)
                return row
            }
        }
    }

    func testAPrefetchedFetchReturnsWhatReadingEachRowInPlaceReturns() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        let written = try insert(messages(3_000, seed: 60), into: database)

        let fetched = try database.read { try PrefetchMessage.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(fetched.count, written.count)
        XCTAssertEqual(fetched, written)
        let viaCodable = try database.read { try CodablePrefetchMessage.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(viaCodable.map(\.body), written.map(\.body))
        XCTAssertEqual(viaCodable.map(\.attachment), written.map(\.attachment))
        XCTAssertEqual(viaCodable.map(\.score), written.map(\.score))
        XCTAssertEqual(viaCodable.map(\.note), written.map(\.note))

        // A cursor reads each row in place: the same records in the same (descending) order.
        let inPlace = try database.read { db in
            var records: [PrefetchMessage] = []
            let cursor = try PrefetchMessage.order { $0.id.desc }.cursor(db)
            while let record = try cursor.next() { records.append(record) }
            return records
        }
        XCTAssertEqual(try database.read { try PrefetchMessage.order { $0.id.desc }.fetchAll($0) }, inPlace)

        // A filter on the compressed column runs `coffer_decompress` on the second thread while this one
        // decodes the rows it passed.
        let filtered = try database.read {
            try PrefetchMessage.filter { $0.body.contains("the") }.order { $0.id.asc }.fetchAll($0)
        }
        XCTAssertEqual(filtered, written.filter { $0.body.lowercased().contains("the") })
        XCTAssertGreaterThan(filtered.count, 500)

        // Ordered by a column without an index: SQLite sorts rows it decoded before the fetch read ahead,
        // attachments that begin with a stored value's marker among them.
        let sorted = try database.read { try PrefetchMessage.order { $0.kind.asc }.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(sorted, written.sorted { ($0.kind, $0.id ?? 0) < ($1.kind, $1.id ?? 0) })

        // Sizes around the rows read in place (64) and the first batch (16) and a full one (64).
        for limit in [0, 1, 63, 64, 65, 80, 81, 128, 144, 145, 1_000] {
            let some = try database.read { try PrefetchMessage.order { $0.id.asc }.limit(limit).fetchAll($0) }
            XCTAssertEqual(some, Array(written.prefix(limit)), "limit \(limit)")
        }
    }

    func testADecodeErrorLateInTheFetchEndsItAndTheConnectionWorksAfter() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        let written = try insert(messages(2_000, seed: 61), into: database)
        try database.write { db in try db.execute(sql: "UPDATE prefetch_message SET kind = 'not a number' WHERE id = 1500") }

        for _ in 0..<20 {
            XCTAssertThrowsError(try database.read { try PrefetchMessage.order { $0.id.asc }.fetchAll($0) }) { error in
                XCTAssertEqual((error as? CofferError)?.code.primary, .conversionFailed, "\(error)")
            }
        }
        let before = try database.read { try PrefetchMessage.filter { $0.id < 1500 }.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(before, Array(written.prefix(1_499)))
        // The writer's own connection too: the failed fetch left no statement running there.
        try database.write { db in
            XCTAssertThrowsError(try PrefetchMessage.fetchAll(db))
            try db.execute(sql: "UPDATE prefetch_message SET kind = 1 WHERE id = 1500")
        }
        XCTAssertEqual(try database.read { try PrefetchMessage.fetchAll($0).count }, 2_000)
    }

    func testAStepErrorLateInTheFetchEndsItAndTheConnectionWorksAfter() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        let written = try insert(messages(2_000, seed: 62), into: database)
        // A compressed body that is not a zstd frame: `coffer_decompress` fails while the row is stepped.
        try database.write { db in
            try db.execute(sql: "UPDATE prefetch_message SET body = x'C000DEADBEEFDEADBEEF' WHERE id = 1700")
        }
        for _ in 0..<20 {
            XCTAssertThrowsError(try database.read { try PrefetchMessage.order { $0.id.asc }.fetchAll($0) }) { error in
                XCTAssertNotNil(error as? CofferError, "\(error)")
            }
        }
        let before = try database.read { try PrefetchMessage.filter { $0.id < 1700 }.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(before, Array(written.prefix(1_699)))
        try database.write { db in try db.execute(sql: "DELETE FROM prefetch_message WHERE id = 1700") }
        XCTAssertEqual(try database.read { try PrefetchMessage.fetchAll($0).count }, 1_999)
    }

    func testTextWithNULsAndEmptyValuesReadAheadExactly() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        var rows: [PrefetchMessage] = []
        for index in 0..<600 {
            let body: String
            switch index % 6 {
            case 0: body = String(repeating: "zero\u{0}byte 零 ", count: 1 + index % 40)  // compressed, holds NULs
            case 1: body = "a\u{0}b"  // too short to shrink: stored plain, holds a NUL
            case 2: body = ""
            case 3: body = "\u{0}"
            default: body = chatSamples(count: 1, seed: index)[0]
            }
            let attachment: Data? = index % 5 == 0 ? Data() : index % 5 == 1 ? nil : Data([0, 0xC0, 0, 0xC2] + Array(body.utf8))
            let note: String? = index % 4 == 0 ? "n\u{0}ote" : index % 4 == 1 ? "" : nil
            rows.append(
                PrefetchMessage(
                    id: nil, kind: Int64(index), score: index % 3 == 0 ? nil : -Double(index) / 3, body: body,
                    attachment: attachment, note: note))
        }
        let written = try insert(rows, into: database)
        let fetched = try database.read { try PrefetchMessage.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(fetched, written)
        XCTAssertEqual(fetched.filter { $0.body.utf8.contains(0) }.count, 300)
        let viaCodable = try database.read { try CodablePrefetchMessage.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(viaCodable.map(\.body), written.map(\.body))
        XCTAssertEqual(viaCodable.map(\.note), written.map(\.note))
    }

    func testAValueWhoseDictionaryIsLostFailsTheFetchAndTheConnectionWorksAfter() throws {
        let path = directory.path("lost.db")
        var database = try makeDatabase("lost.db")
        _ = try insert(messages(500, seed: 64), into: database)
        try database.write { try $0.execute(sql: "DELETE FROM coffer_zstd_dictionary WHERE id = 1") }
        try database.close()
        database = try Database(path: path, configuration: Configuration(encryption: .passphrase("ahead")))
        defer { try? database.close() }
        for _ in 0..<5 {
            XCTAssertThrowsError(try database.read { try PrefetchMessage.fetchAll($0) }) { error in
                XCTAssertTrue("\(error)".contains("dictionary 1 is missing"), "\(error)")
            }
        }
        XCTAssertEqual(try database.read { try PrefetchMessage.fetchCount($0) }, 500)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM prefetch_message") }, 500)
    }

    func testSelectingOneOptionalColumnReadsEachRowsValue() throws {
        // A column reader made before the first step read SQLite's placeholder NULL for every row: an
        // optional selection came back all nil (fixed with the reader made per row).
        let database = try makeDatabase()
        defer { try? database.close() }
        let written = try insert(messages(200, seed: 65), into: database)
        let notes = try database.read { try PrefetchMessage.order { $0.id.asc }.select { $0.note }.fetchAll($0) }
        XCTAssertEqual(notes, written.map(\.note))
        XCTAssertTrue(notes.contains { $0 != nil } && notes.contains { $0 == nil })
        let bodies = try database.read { try PrefetchMessage.order { $0.id.asc }.select { $0.body }.fetchAll($0) }
        XCTAssertEqual(bodies, written.map(\.body))
    }

    func testConcurrentPrefetchedFetchesSeeWholeCommitsWhileTheWriterInserts() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        let batch = messages(200, seed: 63).map { message -> PrefetchMessage in
            var message = message
            if message.body.utf8.count > 10_000 { message.body = String(message.body.prefix(100)) }
            return message
        }
        _ = try insert(batch, into: database)
        let failures = LockedCounter()
        let readers = DispatchGroup()
        for reader in 0..<4 {
            DispatchQueue.global().async(group: readers) {
                for _ in 0..<15 {
                    do {
                        let rows = try database.read { try PrefetchMessage.order { $0.id.asc }.fetchAll($0) }
                        // Whole batches of 200 only, each equal to the batch written.
                        if rows.count % 200 != 0 || rows.isEmpty { failures.add() }
                        for (index, row) in rows.enumerated() where row.body != batch[index % 200].body {
                            failures.add()
                        }
                    } catch {
                        XCTFail("reader \(reader): \(error)")
                    }
                }
            }
        }
        for _ in 0..<10 { _ = try insert(batch, into: database) }
        readers.wait()
        XCTAssertEqual(failures.value, 0)
        XCTAssertEqual(try database.read { try PrefetchMessage.fetchAll($0).count }, 2_200)
    }
}

/// A counter several threads add to.
private final class LockedCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func add() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}
