import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The statements a connection keeps and finds again without hashing SQL: the recent-statement slots
/// in front of the statement cache, the kept `BEGIN`/`COMMIT`, and each record type's INSERT.
final class StatementReuseTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws { database = try makeSchemaDatabase() }
    override func tearDownWithError() throws { try database.close() }

    func testEqualSQLInAnotherStringFindsTheSameStatement() throws {
        try database.write { db in
            let literal = "SELECT count(*) FROM user"
            let built = ["SELECT", "count(*)", "FROM", "user"].joined(separator: " ")
            let first = try db.cachedStatement(sql: literal)
            XCTAssertTrue(first === (try db.cachedStatement(sql: built)))
            XCTAssertTrue(first === (try db.cachedStatement(sql: literal)))
        }
    }

    func testStatementsOfEqualLengthShareASlotAndStayDistinct() throws {
        try database.write { db in
            // 16 apart in length: the same recent-statement slot.
            let short = "SELECT 1 AS a"
            let long = "SELECT 1 AS abcdefghijklmnopq"
            XCTAssertEqual(long.utf8.count - short.utf8.count, 16)
            for _ in 0..<3 {
                XCTAssertEqual(try db.fetchValue(Int.self, sql: short), 1)
                XCTAssertEqual(try db.fetchValue(Int.self, sql: long), 1)
                XCTAssertEqual(try db.fetchOne(sql: short)?.columnNames, ["a"])
                XCTAssertEqual(try db.fetchOne(sql: long)?.columnNames, ["abcdefghijklmnopq"])
            }
            XCTAssertFalse((try db.cachedStatement(sql: short)) === (try db.cachedStatement(sql: long)))
        }
    }

    func testStatementInUseIsNotHandedOutAgain() throws {
        try database.write { db in
            for name in ["a", "b", "c"] {
                var user = User(id: nil, email: nil, name: name, visits: 0)
                try user.insert(db)
            }
            let sql = "SELECT name FROM user ORDER BY id"
            var outer: [String] = []
            var inner: [String] = []
            try db.forEachRow(sql: sql) { statement in
                outer.append(statement.string(at: 0))
                inner = try db.fetchAll(sql: sql).map { try $0.decode(String.self, at: 0) }
            }
            XCTAssertEqual(outer, ["a", "b", "c"])
            XCTAssertEqual(inner, ["a", "b", "c"])
        }
    }

    func testRecordInsertsKeepOneStatementPerTypeAndResolution() throws {
        try database.write { db in
            var user = User(id: nil, email: nil, name: "first", visits: 0)
            try user.insert(db)
            var conversation = Conversation(id: nil, title: "t", archived: false)
            try conversation.insert(db)
            let kept = db.preparedStatementCount
            for index in 0..<50 {
                var user = User(id: nil, email: "\(index)@x", name: "u\(index)", visits: index)
                try user.insert(db)
                XCTAssertEqual(user.id, Int64(index + 2))
                var conversation = Conversation(id: nil, title: "c\(index)", archived: index % 2 == 0)
                try conversation.insert(db)
            }
            XCTAssertEqual(db.preparedStatementCount, kept, "no statement prepared per insert")
            var ignored = User(id: nil, email: "0@x", name: "dup", visits: 0)
            try ignored.insert(db, onConflict: .ignore)
            XCTAssertNil(ignored.id)
            try ignored.insert(db, onConflict: .replace)
            XCTAssertEqual(db.preparedStatementCount, kept + 2, "one more per conflict resolution")
            XCTAssertEqual(try User.fetchCount(db), 51)
            XCTAssertEqual(try Conversation.fetchCount(db), 51)
            XCTAssertEqual(try User.filter { $0.email == "0@x" }.fetchOne(db)?.name, "dup")
        }
    }

    func testTransactionsRunTheirKeptStatementsAndRollBackOnError() throws {
        for index in 0..<5 {
            try database.write { db in
                var user = User(id: nil, email: nil, name: "w\(index)", visits: 0)
                try user.insert(db)
            }
            XCTAssertEqual(try database.read { try User.fetchCount($0) }, index + 1)
        }
        XCTAssertThrowsError(
            try database.write { db in
                var user = User(id: nil, email: nil, name: "rolled back", visits: 0)
                try user.insert(db)
                throw CancellationError()
            })
        XCTAssertEqual(try database.read { try User.fetchCount($0) }, 5)
        XCTAssertEqual(try database.read { try User.filter { $0.name == "rolled back" }.fetchCount($0) }, 0)
    }

    func testInsertIntoAMissingTableFailsEachTime() throws {
        try database.write { db in try db.execute(sql: "DROP TABLE membership") }
        for _ in 0..<2 {
            XCTAssertThrowsError(
                try database.write { db in
                    var membership = Membership(groupID: 1, userID: 1, role: "r")
                    try membership.insert(db)
                }
            ) { error in
                XCTAssertEqual((error as? CofferError)?.code, .error)
            }
        }
    }
}
