import Coffer
import Foundation
import XCTest

/// A record whose own `init(from:)` must run: `@Table` sees it and generates no positional reader.
@Table("shout")
struct Shout: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64
    var word: String

    init(id: Int64, word: String) {
        self.id = id
        self.word = word
    }

    init(from decoder: any Decoder) throws {
        enum Keys: String, CodingKey { case id, word }
        let container = try decoder.container(keyedBy: Keys.self)
        id = try container.decode(Int64.self, forKey: .id)
        word = try container.decode(String.self, forKey: .word).uppercased()
    }
}

/// A record with a stored property that is no column (left out of its `CodingKeys`, with a default).
@Table("renamed")
struct Renamed: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64
    var displayName: String?
    var cached: Int = 7

    enum CodingKeys: String, CodingKey {
        case id
        case displayName = "display_name"
    }
}

/// The reader `@Table` generates (`init(statementRow:)`) reads exactly what the Codable path reads.
final class RecordReaderTests: XCTestCase {
    func testTheGeneratedReaderMatchesTheCodablePathForEveryType() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var first = Everything.sample
            try first.insert(db)
            var second = Everything.sample
            second.optionalInt = -1
            second.optionalStatus = .active
            second.optionalAddress = Address(street: "2 Side", tags: [], geo: nil)
            try second.insert(db)
            let positional = try Everything.order { $0.id.asc }.fetchAll(db)
            let codable = try db.fetchAll(Everything.self, SQL("SELECT * FROM everything ORDER BY id"))
            XCTAssertEqual(positional, [first, second])
            XCTAssertEqual(positional, codable)
            XCTAssertEqual(try Everything.filter { $0.id == second.id }.fetchOne(db), second)
            let cursor = try Everything.order { $0.id.desc }.cursor(db)
            XCTAssertEqual(try cursor.next(), second)
        }
    }

    func testStorageConversionsAndMismatchesAreTheCodablePathsToo() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var record = Everything.sample
            try record.insert(db)
            // An INTEGER read as Double converts; a REAL read as Int64 does not; NULL in a non-optional fails.
            try db.execute(sql: "UPDATE everything SET double = 3")
            XCTAssertEqual(try Everything.fetchAll(db).first?.double, 3)
            for update in ["int64 = 1.5", "string = NULL", "uint8 = 256", "status = 'unknown'", "bool = 'yes'", "bool = NULL"] {
                try db.execute(sql: "DROP TABLE everything")
                try db.upgradeSchema(for: [Everything.self])
                var fresh = Everything.sample
                try fresh.insert(db)
                // A copy without constraints, so the update can store what the schema would refuse.
                try db.execute(sql: "CREATE TABLE loose AS SELECT * FROM everything")
                try db.execute(sql: "DROP TABLE everything")
                try db.execute(sql: "ALTER TABLE loose RENAME TO everything")
                try db.execute(sql: "UPDATE everything SET \(update)")
                let positional = Result { try Everything.fetchAll(db) }
                let codable = Result { try db.fetchAll(Everything.self, SQL("SELECT * FROM everything")) }
                switch (positional, codable) {
                case (.failure(let left as CofferError), .failure(let right as CofferError)):
                    XCTAssertEqual(left.code, right.code, update)
                case (.failure, .failure): break
                case (.success(let left), .success(let right)): XCTAssertEqual(left, right, update)
                default: XCTFail("\(update): positional \(positional), codable \(codable)")
                }
            }
            XCTAssertThrowsError(try Everything.fetchAll(db))
        }
    }

    func testAnInitFromDecoderInTheTypeStillRuns() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Shout.self])
            var shout = Shout(id: 1, word: "hello")
            try shout.insert(db)
            XCTAssertEqual(try Shout.fetchAll(db), [Shout(id: 1, word: "HELLO")])
            XCTAssertEqual(try Shout.filter { $0.id == 1 }.fetchOne(db)?.word, "HELLO")
        }
    }

    func testCodingKeysNameTheColumnsAndANonColumnKeepsItsDefault() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Renamed.self])
            try db.execute(sql: "INSERT INTO renamed(id, display_name) VALUES (1, 'Ann'), (2, NULL)")
            XCTAssertEqual(
                try Renamed.order { $0.id.asc }.fetchAll(db),
                [Renamed(id: 1, displayName: "Ann", cached: 7), Renamed(id: 2, displayName: nil, cached: 7)])
        }
    }
}
