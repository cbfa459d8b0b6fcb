import Coffer
import XCTest

/// Every way to start a query works on the `@Table` type itself, as on a `Query`.
final class QueryTypeMethodTests: XCTestCase {
    func testTypeLevelMethodsMatchTheirQueryForms() throws {
        let database = try makeSchemaDatabase()
        defer { try? database.close() }
        try database.write { db in
            let (work, old) = try insertWorkAndOldConversations(db)
            for (offset, body) in ["a", "bb", "ccc"].enumerated() {
                var message = Message(
                    id: nil, conversationID: offset == 0 ? old : work, body: body, score: Double(offset), createdAt: referenceDate
                )
                try message.insert(db)
            }
            XCTAssertEqual(try Message.filter(sql: "length(body) > \(1)").fetchCount(db), 2)
            XCTAssertEqual(try Message.limit(2, offset: 1).select { $0.body }.fetchAll(db), ["bb", "ccc"])
            XCTAssertEqual(try Message.group { [$0.conversationID] }.fetchCount(db), 2)
            XCTAssertEqual(try Message.fetchOne(db)?.body, "a")
            XCTAssertTrue(try Message.exists(db))
            XCTAssertEqual(try Message.cursor(db).next()?.body, "a")
            let pairs = try Message.join(Conversation.self) { $0.conversationID == $1.id }.fetchAll(db)
            XCTAssertEqual(pairs.count, 3)
            XCTAssertEqual(try Conversation.leftJoin(Message.self) { $0.id == $1.conversationID }.fetchAll(db).count, 3)
            XCTAssertEqual(try Message.updateAll(db) { [$0.score.set(to: 9)] }, 3)
            XCTAssertEqual(try Message.filter { $0.score == 9 }.fetchCount(db), 3)
            XCTAssertEqual(try Message.deleteAll(db), 3)
            XCTAssertFalse(try Message.exists(db))
        }
    }
}
