import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The "Tables and queries" tour (QueriesAndRecords.md since the README became a front page), compiled and
/// run as written.
@Table("message") struct TourMessage: Codable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var body: String
    @Column(default: 0) var score: Double
    static var indexes: [TableIndex<TourMessage>] { [TableIndex(columns.conversationID)] }
}

extension TourMessage {
    static let byID = Result { try TourMessage.filter { $0.id == .parameter }.prepared() }  // rendered once
}

final class ReadmeTourTests: XCTestCase {
    func testTheTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("tour.db"), configuration: Configuration(encryption: .passphrase("pw")))

        var migrator = Migrator()
        migrator.register("v1") { db in try db.upgradeSchema(for: [TourMessage.self]) }
        try migrator.migrate(database)

        try database.write { db in
            var message = TourMessage(id: nil, conversationID: 1, body: "50% off", score: 0)
            try message.insert(db)
            XCTAssertNotNil(message.id)
            var other = TourMessage(id: nil, conversationID: 1, body: "500 off", score: 0)
            try other.insert(db)
            _ = try TourMessage.filter { $0.conversationID == 1 }.updateAll(db) { [$0.score.set(to: $0.score + 1)] }
        }
        let hits = try database.read { db in
            try TourMessage.filter { $0.body.contains("50%") && $0.conversationID == 1 }
                .order { $0.id.desc }.limit(20).fetchAll(db)
        }
        XCTAssertEqual(hits.map(\.body), ["50% off"], "% in contains() is literal, not a wildcard")
        XCTAssertEqual(hits.first?.score, 1)
        XCTAssertEqual(try database.write { try migrator.appliedMigrations($0) }, ["v1"])
    }

    func testThePreparedQueryExampleRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("tour.db"), configuration: Configuration(encryption: .passphrase("pw")))
        try database.write { db in
            try db.upgradeSchema(for: [TourMessage.self])
            for body in ["a", "b", "c"] {
                var message = TourMessage(id: nil, conversationID: 1, body: body, score: 0)
                try message.insert(db)
            }
        }
        let ids: [Int64] = [3, 1, 7]
        var shown: [String] = []
        func show(_ message: TourMessage) { shown.append(message.body) }
        try database.read { db in
            let byID = try TourMessage.byID.get()
            for id in ids { if let message = try byID.fetchOne(db, id) { show(message) } }
        }
        XCTAssertEqual(shown, ["c", "a"])
        let latest = try TourMessage.byID.get().fetchOne(database, 2)  // one statement, a read of its own
        XCTAssertEqual(latest?.body, "b")
        try database.close()
    }
}
