import Coffer
import Foundation
import XCTest

/// `PreparedQuery`: SQL rendered once, arguments bound per execution, against a real encrypted database.
final class PreparedQueryTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws {
        database = try makeSchemaDatabase()
        _ = try database.write { db in try insertConversationsAndMessages(db, count: 40) }
    }

    override func tearDownWithError() throws { try database.close() }

    func testSQLIsRenderedOnceWithAPlaceholderPerParameter() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        XCTAssertEqual(
            byID.sql, #"SELECT "id", "conversationID", "body", "score", "createdAt" FROM "message" WHERE ("id") = (?)"#)
        XCTAssertEqual(byID.parameterCount, 1)

        let mixed = try Message.filter { $0.conversationID == .parameter && $0.score >= 2 }
            .order { $0.score.desc }.limit(3).prepared()
        XCTAssertEqual(mixed.parameterCount, 1)
        XCTAssertEqual(mixed.sql.filter { $0 == "?" }.count, 3)  // the parameter, the constant 2, the limit
        XCTAssertFalse(mixed.sql.contains("2"))
    }

    func testResultsMatchTheUnpreparedQuery() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        let byConversation = try Message.filter { $0.conversationID == .parameter && $0.score >= 2 }
            .order { [$0.score.desc, $0.id.asc] }.limit(5).prepared()
        try database.read { db in
            for id in Int64(0)...42 {
                XCTAssertEqual(try byID.fetchOne(db, arguments: [id]), try Message.filter { $0.id == id }.fetchOne(db))
            }
            for conversation in Int64(1)...3 {
                let expected = try Message.filter { $0.conversationID == conversation && $0.score >= 2 }
                    .order { [$0.score.desc, $0.id.asc] }.limit(5).fetchAll(db)
                XCTAssertEqual(try byConversation.fetchAll(db, arguments: [conversation]), expected)
                if conversation < 3 { XCTAssertEqual(expected.count, 5) }
            }
        }
    }

    func testRebindingInOneReadAndAcrossReads() throws {
        let byScore = try Message.filter { $0.score.between(.parameter, and: .parameter) }.order { $0.id.asc }.prepared()
        try database.read { db in
            // The same compiled statement, rebound each time: no value of a previous run may linger.
            XCTAssertEqual(try byScore.fetchAll(db, arguments: [0.0, 0.0]).map(\.score), Array(repeating: 0, count: 6))
            XCTAssertEqual(try byScore.fetchAll(db, arguments: [5.0, 6.0]).count, 10)
            XCTAssertEqual(try byScore.fetchAll(db, arguments: [7.0, 9.0]), [])
            XCTAssertEqual(try byScore.fetchAll(db, arguments: [6.0, 6.0]).count, 5)
        }
        for round in 0..<5 {
            let count = try database.read { db in try byScore.fetchAll(db, arguments: [0.0, Double(round)]).count }
            XCTAssertEqual(
                count,
                try database.read { db in
                    try Message.filter { $0.score <= Double(round) }.fetchCount(db)
                })
        }
    }

    func testTypedArgumentsMatchTheArgumentsArray() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        let byScore = try Message.filter { $0.score.between(.parameter, and: .parameter) }.order { $0.id.asc }.prepared()
        let mixed = try Message.filter { $0.conversationID == .parameter && $0.score >= 2 && $0.body != .parameter }
            .order { $0.id.desc }.limit(4).prepared()
        try database.read { db in
            for id in Int64(0)...41 {
                XCTAssertEqual(try byID.fetchOne(db, id), try byID.fetchOne(db, arguments: [id]))
            }
            XCTAssertEqual(try byScore.fetchAll(db, 2.0, 4.0), try byScore.fetchAll(db, arguments: [2.0, 4.0]))
            XCTAssertEqual(try byScore.fetchAll(db, 2.0, 4.0).count, 18)
            let expected = try Message.filter { $0.conversationID == 1 && $0.score >= 2 && $0.body != "body 34" }
                .order { $0.id.desc }.limit(4).fetchAll(db)
            XCTAssertEqual(try mixed.fetchAll(db, Int64(1), "body 34"), expected)
            XCTAssertEqual(expected.count, 4)
            XCTAssertThrowsError(try byScore.fetchAll(db, 1.0)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
            // The one-argument fetchOne (inlinable, specialized here) refuses a query of two parameters.
            XCTAssertThrowsError(try byScore.fetchOne(db, 1.0)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
            XCTAssertThrowsError(try byID.fetchOne(db, Int64(1), Int64(2))) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
            XCTAssertEqual(try byID.fetchOne(db, Int64(2))?.id, 2)  // usable after a refused call
        }
    }

    func testWritesAreSeenByTheNextExecution() throws {
        let byBody = try Message.filter { $0.body == .parameter }.prepared()
        try database.write { db in
            XCTAssertNil(try byBody.fetchOne(db, arguments: ["new"]))
            var message = Message(id: nil, conversationID: 1, body: "new", score: 1, createdAt: referenceDate)
            try message.insert(db)
            XCTAssertEqual(try byBody.fetchOne(db, arguments: ["new"])?.id, message.id)
        }
        XCTAssertEqual(try database.read { db in try byBody.fetchOne(db, arguments: ["new"])?.body }, "new")
    }

    func testArgumentsAreBoundNeverInterpolated() throws {
        let byBody = try Message.filter { $0.body == .parameter }.prepared()
        try database.read { db in
            XCTAssertEqual(try byBody.fetchAll(db, arguments: ["body 1' OR '1'='1"]), [])
            XCTAssertEqual(try byBody.fetchAll(db, arguments: ["body 1"]).count, 1)
        }
    }

    func testEqualShapesShareAStatementAndKeepTheirOwnConstants() throws {
        // Same SQL, different constants: each execution binds its own.
        let high = try Message.filter { $0.conversationID == .parameter && $0.score >= 5 }.prepared()
        let low = try Message.filter { $0.conversationID == .parameter && $0.score >= 0 }.prepared()
        XCTAssertEqual(high.sql, low.sql)
        try database.read { db in
            for _ in 0..<3 {
                XCTAssertEqual(
                    try high.fetchAll(db, arguments: [2]),
                    try Message.filter { $0.conversationID == 2 && $0.score >= 5 }.fetchAll(db))
                XCTAssertEqual(try low.fetchAll(db, arguments: [2]).count, 14)  // "old": every third message
            }
        }
    }

    func testOneQuerySharedByConcurrentReadersAndTheWriter() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        let failures = FailureLog()
        let group = DispatchGroup()
        let database = try XCTUnwrap(self.database)
        for reader in 0..<4 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                do {
                    for round in 0..<200 {
                        let id = Int64((reader * 31 + round) % 40 + 1)
                        let message = try database.read { db in try byID.fetchOne(db, arguments: [id]) }
                        if message?.id != id {
                            failures.add("reader \(reader): id \(id) gave \(String(describing: message?.id))")
                        }
                    }
                } catch {
                    failures.add("reader \(reader): \(error)")
                }
            }
        }
        for round in 0..<50 {
            try database.write { db in
                let id = Int64(round % 40 + 1)
                guard var message = try byID.fetchOne(db, arguments: [id]) else { return XCTFail("no row \(id)") }
                message.score += 1
                try message.update(db)
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 60), .success)
        XCTAssertEqual(failures.messages, [])
    }

    // MARK: Misuse: typed errors, never a crash

    func testWrongArgumentCountIsARangeError() throws {
        let byScore = try Message.filter { $0.score.between(.parameter, and: .parameter) }.prepared()
        try database.read { db in
            XCTAssertThrowsError(try byScore.fetchAll(db, arguments: [1.0])) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
            XCTAssertThrowsError(try byScore.fetchOne(db)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
            // The statement is still usable after a refused call.
            XCTAssertEqual(try byScore.fetchAll(db, arguments: [0.0, 6.0]).count, 40)
        }
    }

    func testAQueryWithAParameterMustBePrepared() throws {
        try database.read { db in
            XCTAssertThrowsError(try Message.filter { $0.id == .parameter }.fetchAll(db)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
            }
        }
    }

    func testUseOnAnotherDatabasesConnectionIsATypedError() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        let other = try makeDatabase()  // no message table
        defer { try? other.close() }
        try other.read { db in
            XCTAssertThrowsError(try byID.fetchOne(db, arguments: [1])) { error in
                XCTAssertNotNil(error as? CofferError)
            }
        }
        // The failed compile on one connection leaves the query usable on the others.
        XCTAssertEqual(try database.read { db in try byID.fetchOne(db, arguments: [1])?.id }, 1)
    }

    func testUseAfterTheConnectionClosedIsATypedError() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        var escaped: Connection?
        try database.read { db in
            _ = try byID.fetchOne(db, arguments: [1])
            escaped = db  // kept beyond its closure: documented as wrong, must still not crash
        }
        try database.close()
        let connection = try XCTUnwrap(escaped)
        XCTAssertThrowsError(try byID.fetchOne(connection, arguments: [1])) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
        }
        database = try makeDatabase()  // for tearDown
    }
}

/// Failures collected from threads, asserted on the test's thread.
private final class FailureLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ message: String) { lock.withLock { list.append(message) } }
    var messages: [String] { lock.withLock { list } }
}
