import Coffer
import XCTest

/// Queries against a real encrypted database.
final class QueryRoundTripTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws {
        database = try makeSchemaDatabase()
        try database.write { db in
            let (work, old) = try insertWorkAndOldConversations(db)
            let bodies = ["hello", "50% off", "under_score", "back\\slash", "HELLO again", "bye"]
            for (offset, body) in bodies.enumerated() {
                var message = Message(
                    id: nil, conversationID: offset < 4 ? work : old, body: body,
                    score: Double(offset), createdAt: referenceDate.addingTimeInterval(Double(offset)))
                try message.insert(db)
            }
        }
    }

    override func tearDownWithError() throws { try database.close() }

    func testFilterOrderLimitOffset() throws {
        let bodies = try database.read { db in
            try Message.filter { $0.score >= 1 }.order { $0.score.desc }.limit(2, offset: 1).select { $0.body }.fetchAll(db)
        }
        XCTAssertEqual(bodies, ["HELLO again", "back\\slash"])
    }

    func testFetchRecordsAndOne() throws {
        try database.read { db in
            let all = try Message.order { $0.id.asc }.fetchAll(db)
            XCTAssertEqual(all.count, 6)
            XCTAssertEqual(all[0].body, "hello")
            XCTAssertEqual(all[0].createdAt, referenceDate)
            XCTAssertEqual(try Message.filter { $0.body == "bye" }.fetchOne(db)?.score, 5)
            XCTAssertNil(try Message.filter { $0.body == "nope" }.fetchOne(db))
        }
    }

    func testCountAndExists() throws {
        try database.read { db in
            XCTAssertEqual(try Message.fetchCount(db), 6)
            XCTAssertEqual(try Message.filter { $0.score < 2 }.fetchCount(db), 2)
            XCTAssertEqual(try Message.all().limit(4).fetchCount(db), 4)
            XCTAssertEqual(try Message.group { $0.conversationID }.fetchCount(db), 2)
            XCTAssertTrue(try Message.filter { $0.body == "bye" }.exists(db))
            XCTAssertFalse(try Message.filter { $0.body == "nope" }.exists(db))
        }
    }

    func testAggregates() throws {
        try database.read { db in
            XCTAssertEqual(try Message.select { $0.score.sum() }.fetchOne(db), 15)
            XCTAssertEqual(try Message.select { $0.score.average() }.fetchOne(db), 2.5)
            XCTAssertEqual(try Message.select { $0.score.min() }.fetchOne(db), 0)
            XCTAssertEqual(try Message.select { $0.score.max() }.fetchOne(db), 5)
            XCTAssertEqual(try Message.select { $0.body.count() }.fetchOne(db), 6)
            XCTAssertEqual(try Message.select { $0.conversationID.count(distinct: true) }.fetchOne(db), 2)
            let none = Message.filter { $0.score > 100 }
            XCTAssertNil(try none.select { $0.score.sum() }.fetchOne(db))
            XCTAssertEqual(try none.select { $0.score.total() }.fetchOne(db), 0)
        }
    }

    func testGroupByHaving() throws {
        let rows = try database.read { db in
            try Message.group { $0.conversationID }
                .having { $0.score.sum() > 7 }
                .select { [$0.conversationID, countAll(Message.self)] }
                .fetchAll(db)
        }
        XCTAssertEqual(rows.count, 1)
        XCTAssertEqual(rows.first?[1], .integer(2))
    }

    func testInListsAndSubselects() throws {
        try database.read { db in
            XCTAssertEqual(try Message.filter { $0.id.in([1, 3, 99]) }.fetchCount(db), 2)
            XCTAssertEqual(try Message.filter { $0.id.in([]) }.fetchCount(db), 0)
            let archived = Conversation.filter { $0.archived == true }.select { $0.id }
            XCTAssertEqual(
                try Message.filter { $0.conversationID.in(archived) }.select { $0.body }.fetchAll(db), ["HELLO again", "bye"])
        }
    }

    func testLikeEscaping() throws {
        try database.read { db in
            XCTAssertEqual(try Message.filter { $0.body.contains("%") }.select { $0.body }.fetchAll(db), ["50% off"])
            XCTAssertEqual(try Message.filter { $0.body.contains("_") }.select { $0.body }.fetchAll(db), ["under_score"])
            XCTAssertEqual(try Message.filter { $0.body.contains("\\") }.select { $0.body }.fetchAll(db), ["back\\slash"])
            XCTAssertEqual(try Message.filter { $0.body.hasPrefix("hello") }.fetchCount(db), 2, "LIKE ignores ASCII case")
            XCTAssertEqual(try Message.filter { $0.body.hasSuffix("ye") }.select { $0.body }.fetchAll(db), ["bye"])
            XCTAssertEqual(try Message.filter { $0.body.like("h_llo%") }.fetchCount(db), 2)
        }
    }

    func testNullAndBetween() throws {
        try database.write { db in
            var anonymous = User(id: nil, email: nil, name: "anon", visits: 0)
            var named = User(id: nil, email: "a@b.c", name: "named", visits: 3)
            try anonymous.insert(db)
            try named.insert(db)
            XCTAssertEqual(try User.filter { $0.email == nil }.select { $0.name }.fetchAll(db), ["anon"])
            XCTAssertEqual(try User.filter { $0.email.isNotNull }.select { $0.name }.fetchAll(db), ["named"])
            XCTAssertEqual(try Message.filter { $0.score.between(2, and: 3) }.fetchCount(db), 2)
            XCTAssertEqual(try Message.filter { !($0.score.between(2, and: 3)) || $0.body == "x" }.fetchCount(db), 4)
        }
    }

    func testInnerAndLeftJoins() throws {
        try database.write { db in
            var empty = Conversation(id: nil, title: "empty", archived: false)
            try empty.insert(db)
            let pairs = try Message.all()
                .join(Conversation.self) { message, conversation in message.conversationID == conversation.id }
                .filter { _, conversation in conversation.archived == true }
                .order { message, _ in [message.id.asc] }
                .fetchAll(db)
            XCTAssertEqual(pairs.map(\.0.body), ["HELLO again", "bye"])
            XCTAssertEqual(pairs.map(\.1.title), ["old", "old"])

            let left = try Conversation.order { $0.id.asc }
                .leftJoin(Message.self) { conversation, message in conversation.id == message.conversationID }
                .filter { _, message in message.score > 4 || message.id.isNull }
                .fetchAll(db)
            XCTAssertEqual(left.map(\.0.title), ["old", "empty"])
            XCTAssertEqual(left.map { $0.1?.body }, ["bye", nil])
        }
    }

    func testSQLLiteralQueries() throws {
        try database.read { db in
            let minimum = 4.0
            let rows = try db.fetchAll(SQL("SELECT body FROM \(identifier: "message") WHERE score >= \(minimum) ORDER BY id"))
            XCTAssertEqual(rows.compactMap { $0["body"] as String? }, ["HELLO again", "bye"])
            let records = try db.fetchAll(Message.self, SQL("SELECT * FROM message WHERE body = \("bye")"))
            XCTAssertEqual(records.map(\.score), [5])
            XCTAssertEqual(try Message.all().filter(sql: "length(body) > \(8)").fetchCount(db), 3)
        }
    }
}
