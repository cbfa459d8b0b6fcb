import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// QueriesAndRecords.md's table, in a namespace of its own (this target's top-level `Message` is
/// FullTextSearch.md's).
enum QueriesArticle {
    @Table("message") struct Message: Codable {
        @Column(primaryKey: true) var id: Int64?
        var conversationID: Int64
        var body: String
        @Column(default: 0) var score: Double
        static var indexes: [TableIndex<Message>] { [TableIndex(columns.conversationID)] }
    }

    /// "Your own value types": the table a prepared query binds `Cents` against.
    @Table("payment") struct Payment: Codable {
        @Column(primaryKey: true) var id: Int64?
        var price: Int64?
    }

    /// "What SQLCipher 4 adds": a page's visit counter.
    @Table("visit") struct Visit: Codable {
        @Column(primaryKey: true) var id: Int64?
        @Column(unique: true) var page: String
        var title: String
        var count: Int64
    }
}

// QueriesAndRecords.md, "Prepared queries", on this target's top-level `Message` (FullTextSearch.md's).
extension Message {
    static let byID = Result { try Message.filter { $0.id == .parameter }.prepared() }  // rendered once
}

// QueriesAndRecords.md, "Your own value types".
struct Cents: DatabaseValueConvertible, Equatable {
    var amount: Int64
    var databaseValue: DatabaseValue { .integer(amount) }
    static func fromDatabaseValue(_ value: DatabaseValue) -> Cents? {
        guard case .integer(let amount) = value else { return nil }
        return Cents(amount: amount)
    }
}

/// The ```swift blocks of QueriesAndRecords.md, compiled and run as written.
final class QueriesAndRecordsArticleTests: XCTestCase {
    func testYourOwnValueTypes() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        try database.write { db in
            try db.execute(sql: "CREATE TABLE payment(id INTEGER PRIMARY KEY, price INTEGER)")
            try db.execute(sql: "INSERT INTO payment(price) VALUES (?)", arguments: [Cents(amount: 1_999)])
        }
        let price = try database.read { db in try db.fetchOne(sql: "SELECT price FROM payment")?.decode(Cents.self, at: 0) }

        XCTAssertEqual(price, Cents(amount: 1_999))
        try database.write { db in try db.execute(sql: "INSERT INTO payment(price) VALUES ('free')") }
        XCTAssertThrowsError(
            try database.read { db in try db.fetchOne(sql: "SELECT price FROM payment WHERE id = 2")?.decode(Cents.self, at: 0) }
        ) { error in
            guard case CofferError.conversionFailed = error else { return XCTFail("\(error)") }
        }
        // Bound through the protocol's default bind(to:at:), as a prepared query binds it.
        let prepared = try QueriesArticle.Payment.filter { $0.price == .parameter }.prepared()
        XCTAssertEqual(try prepared.fetchAll(database, Cents(amount: 1_999)).map(\.id), [1])
        try database.close()
    }
    func testOverview() throws {
        typealias Message = QueriesArticle.Message
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        var migrator = Migrator()
        migrator.register("v1") { db in try db.upgradeSchema(for: [Message.self]) }
        try migrator.migrate(database)  // each migration once, in order, in its own transaction

        try database.write { db in
            var message = Message(id: nil, conversationID: 1, body: "50% off", score: 0)
            try message.insert(db)  // message.id is set from the new rowid
            _ = try Message.filter { $0.conversationID == 1 }.updateAll(db) { [$0.score.set(to: $0.score + 1)] }
        }
        let hits = try database.read { db in
            try Message.filter { $0.body.contains("50%") && $0.conversationID == 1 }  // "%" is literal
                .order { $0.id.desc }.limit(20).fetchAll(db)
        }

        XCTAssertEqual(hits.map(\.body), ["50% off"])
        XCTAssertEqual(hits.first?.id, 1)
        XCTAssertEqual(hits.first?.score, 1)
        try database.write { db in
            var other = Message(id: nil, conversationID: 1, body: "500 off", score: 0)
            try other.insert(db)
        }
        let literal = try database.read { db in try Message.filter { $0.body.contains("50%") }.fetchCount(db) }
        XCTAssertEqual(literal, 1, "% in contains() is literal, not a wildcard")
        XCTAssertEqual(try database.write { try migrator.appliedMigrations($0) }, ["v1"])
        try database.close()
    }

    func testWhatSQLCipher4Adds() throws {
        typealias Visit = QueriesArticle.Visit
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        _ = try database.write { db in try db.upgradeSchema(for: [Visit.self]) }

        var rounds: [(Int64, [String])] = []
        for _ in 0..<3 {
            try database.write { db in
                if LinkedSQLite.supports(.returning) {
                    let visit = try Visit(id: nil, page: "/home", title: "Home", count: 1).upsertAndFetch(
                        db, onConflict: { [$0.page] }, doUpdate: { [$0.count.set(to: $0.count + $0.count.excluded)] })
                    let popular = try Visit.filter { $0.count >= 3 }.deleteAndFetchAll(db)  // the rows it deleted
                    rounds.append((visit.count, popular.map(\.page)))
                }
            }
        }
        XCTAssertEqual(try database.read { try Visit.fetchCount($0) }, 0, "deleted at 3 visits, or never written")
        if LinkedSQLite.supports(.returning) {
            XCTAssertEqual(rounds.map(\.0), [1, 2, 3])
            XCTAssertEqual(rounds.map(\.1), [[], [], ["/home"]])
        } else {
            XCTAssertThrowsError(try database.write { _ = try Visit.all().deleteAndFetchAll($0) }) {
                XCTAssertEqual(($0 as? CofferError)?.code, .unsupportedByLibrary)
            }
        }
    }

    func testPreparedQueries() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try database.write { db in
            try db.upgradeSchema(for: [Message.self])
            for id in [1, 42] as [Int64] {
                var row = Message(id: id, conversationID: 7, sender: "Ana", body: "message \(id)")
                try row.insert(db)
            }
        }
        let ids: [Int64] = [42, 2, 1]
        var shown: [String] = []
        func show(_ message: Message) { shown.append(message.body) }

        try database.read { db in
            let byID = try Message.byID.get()
            for id in ids { if let message = try byID.fetchOne(db, id) { show(message) } }
        }
        let message = try Message.byID.get().fetchOne(database, 42)  // one statement, a read of its own

        XCTAssertEqual(shown, ["message 42", "message 1"])
        XCTAssertEqual(message?.body, "message 42")
        XCTAssertThrowsError(try Message.byID.get().fetchOne(database, arguments: [1, 2])) { error in
            XCTAssertEqual((error as? CofferError)?.code, .range)
        }
        try database.close()
    }
}
