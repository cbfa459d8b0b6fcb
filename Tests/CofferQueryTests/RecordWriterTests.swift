import Foundation
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// A record whose own `encode(to:)` must run: `@Table` sees it and generates no column writer.
@Table("whisper")
struct Whisper: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64
    var word: String

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(word.lowercased(), forKey: .word)
    }
}

/// The writer `@Table` generates (`columnValues()` and the binder `bindColumns(to:then:)`) stores exactly
/// what the Codable path stores.
final class RecordWriterTests: XCTestCase {
    func testTheGeneratedWriterMatchesTheCodablePathForEveryType() throws {
        var filled = Everything.sample
        filled.id = 7
        filled.optionalInt = -1
        filled.optionalString = nil
        filled.optionalStatus = .active
        filled.optionalDate = nil
        filled.optionalAddress = Address(street: "2 Side", tags: [], geo: nil)
        for record in [Everything.sample, filled] {
            let generated = try record.columnValues()
            XCTAssertEqual(generated, try RecordEncoder<Everything>().values(of: record))
            XCTAssertEqual(generated.count, Everything.columnDefinitions.count)
        }
        // Renamed columns, and a stored property that is no column.
        let renamed = Renamed(id: 3, displayName: "Ann", cached: 9)
        XCTAssertEqual(try renamed.columnValues(), [.integer(3), .text("Ann")])
        XCTAssertEqual(try renamed.columnValues(), try RecordEncoder<Renamed>().values(of: renamed))
    }

    /// What the generated binder binds, read back through `SELECT ?1, ?2, …`: the values the Codable path
    /// stores, type for type (NULLs, optionals, integers of every width, Data, Date, URL, UUID, enums,
    /// JSON columns, empty text and blobs).
    func testTheGeneratedBinderBindsWhatTheCodablePathStores() throws {
        var filled = Everything.sample
        filled.id = 7
        filled.optionalInt = -1
        filled.optionalString = ""
        filled.optionalStatus = .active
        filled.optionalDate = nil
        filled.string = ""
        filled.data = Data()
        filled.optionalAddress = Address(street: "2 Side", tags: [], geo: nil)
        let database = try makeDatabase()
        defer { try? database.close() }
        try database.read { db in
            for record in [Everything.sample, filled] {
                XCTAssertEqual(try Self.bound(record, db), try RecordEncoder<Everything>().values(of: record))
            }
            let renamed = Renamed(id: 3, displayName: "Ann", cached: 9)
            XCTAssertEqual(try Self.bound(renamed, db), [.integer(3), .text("Ann")])
            // A type whose own `encode(to:)` runs: the default binder, through Codable.
            XCTAssertEqual(try Self.bound(Whisper(id: 1, word: "LOUD"), db), [.integer(1), .text("loud")])
        }
    }

    func testAnUpdateThroughTheBinderChangesOnlyTheRowWithTheKey() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            try Everything.insertAll([Everything.sample, Everything.sample, Everything.sample], db)
            var changed = Everything.sample
            changed.id = 2
            changed.string = "second"
            changed.optionalInt = 5
            changed.data = Data()
            XCTAssertTrue(try changed.update(db))
            changed.id = 99
            XCTAssertFalse(try changed.update(db))
            changed.id = 2
            var untouched = Everything.sample
            let rows = try Everything.order { $0.id.asc }.fetchAll(db)
            untouched.id = 1
            XCTAssertEqual(rows.first, untouched)
            XCTAssertEqual(rows.dropFirst().first, changed)
            untouched.id = 3
            XCTAssertEqual(rows.last, untouched)
        }
    }

    /// The values `record`'s ``TableRecord/bindColumns(to:then:)`` binds, as a statement reads them back.
    private static func bound<Record: TableRecord>(_ record: Record, _ db: Connection) throws -> [DatabaseValue] {
        let count = Record.columnDefinitions.count
        let statement = try db.makeStatement(sql: "SELECT " + (1...count).map { "?\($0)" }.joined(separator: ", "))
        var values: [DatabaseValue] = []
        try record.bindColumns(to: RecordBinder(statement: statement)) {
            XCTAssertTrue((try? statement.step()) == true)
            values = (0..<count).map { statement.value(at: $0) }
        }
        return values
    }

    func testRecordsWrittenByTheGeneratedWriterReadBackEqual() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var first = Everything.sample
            try first.insert(db)
            var second = Everything.sample
            second.optionalAddress = Address(street: "2 Side", tags: ["x"], geo: [0])
            try Everything.insertAll([second], db)
            second.id = 2
            XCTAssertEqual(try Everything.order { $0.id.asc }.fetchAll(db), [first, second])
            second.string = "changed"
            XCTAssertTrue(try second.update(db))
            XCTAssertEqual(try Everything.filter { $0.id == 2 }.fetchOne(db), second)
        }
    }

    func testAnEncodeToInTheTypesBodyIsWhatWritesStore() throws {
        let database = try makeDatabase()
        defer { try? database.close() }
        try database.write { db in
            try db.upgradeSchema(for: [Whisper.self])
            var whisper = Whisper(id: 1, word: "LOUD")
            try whisper.insert(db)
            XCTAssertEqual(try db.fetchValue(String.self, sql: "SELECT word FROM whisper WHERE id = 1"), "loud")
            whisper.word = "AGAIN"
            XCTAssertTrue(try whisper.update(db))
            XCTAssertEqual(try db.fetchValue(String.self, sql: "SELECT word FROM whisper WHERE id = 1"), "again")
        }
    }
}
