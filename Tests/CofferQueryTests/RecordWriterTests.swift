import Foundation
import XCTest

@testable import Coffer

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

/// The writer `@Table` generates (`columnValues()`) stores exactly what the Codable path stores.
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
