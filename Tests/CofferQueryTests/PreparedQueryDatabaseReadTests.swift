import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `PreparedQuery.fetchOne(database, …)` and `fetchAll(database, …)`: one statement on a reader outside any
/// transaction, against real encrypted files, real threads and a writer committing meanwhile.
final class PreparedQueryDatabaseReadTests: XCTestCase {
    private var database: Database!
    private var work: Int64 = 0

    override func setUpWithError() throws {
        database = try makeSchemaDatabase()
        work = try database.write { db in try insertConversationsAndMessages(db, count: 30).work }
    }

    override func tearDownWithError() throws { try database.close() }

    func testResultsMatchTheSameQueryInAReadClosure() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        let byConversation = try Message.filter { $0.conversationID == .parameter && $0.score >= .parameter }
            .order { [$0.score.desc, $0.id.asc] }.prepared()
        for id in Int64(0)...32 {
            let expected = try database.read { db in try byID.fetchOne(db, id) }
            XCTAssertEqual(try byID.fetchOne(database, id), expected)
            XCTAssertEqual(try byID.fetchOne(database, arguments: [id]), expected)
        }
        for conversation in Int64(1)...3 {
            let expected = try database.read { db in try byConversation.fetchAll(db, conversation, 2.0) }
            XCTAssertEqual(try byConversation.fetchAll(database, conversation, 2.0), expected)
            XCTAssertEqual(try byConversation.fetchAll(database, arguments: [conversation, 2.0]), expected)
        }
        XCTAssertEqual(try byConversation.fetchAll(database, work, 0.0).count, 20)
    }

    /// The one-argument forms (no parameter pack) agree with the array form, on a connection and on the
    /// database, and refuse a query that takes another number of arguments.
    func testOneArgumentFormsAgreeAndCheckTheCount() throws {
        let inConversation = try Message.filter { $0.conversationID == .parameter }.order { $0.id.asc }.prepared()
        let all = try Message.all().order { $0.id.asc }.limit(3).prepared()
        let byScore = try Message.filter { $0.score.between(.parameter, and: .parameter) }.prepared()
        for conversation in [work, -1] {
            let expected = try inConversation.fetchAll(database, arguments: [conversation])
            XCTAssertEqual(expected.count, conversation == work ? 20 : 0)
            XCTAssertEqual(try inConversation.fetchAll(database, conversation), expected)
            XCTAssertEqual(try inConversation.fetchOne(database, conversation), expected.first)
            try database.read { db in
                XCTAssertEqual(try inConversation.fetchAll(db, conversation), expected)
                XCTAssertEqual(try inConversation.fetchOne(db, conversation), expected.first)
            }
        }
        for attempt in [{ _ = try all.fetchOne(self.database, Int64(1)) }, { _ = try byScore.fetchAll(self.database, 1.0) }] {
            XCTAssertThrowsError(try attempt()) { error in XCTAssertEqual((error as? CofferError)?.code, .range) }
        }
        XCTAssertEqual(try all.fetchAll(database).count, 3)  // the statement is usable after a refused call
    }

    /// The writer adds messages two at a time in one transaction; a reader's single statement, stepping
    /// through every row while commits land, must see an even count every time: one snapshot, start to end.
    func testOneStatementSeesOneSnapshotWhileTheWriterCommits() throws {
        let inWork = try Message.filter { $0.conversationID == .parameter }.order { $0.id.asc }.prepared()
        let before = try inWork.fetchAll(database, work).count
        XCTAssertEqual(before % 2, 0)
        let database = self.database!
        let work = self.work
        let done = DispatchSemaphore(value: 0)
        let firstReadDone = DispatchSemaphore(value: 0)
        let failure = LockedBox<(any Error)?>(nil)
        Thread {
            firstReadDone.wait()
            do {
                for round in 0..<150 {
                    try database.write { db in
                        for half in 0..<2 {
                            var message = Message(
                                id: nil, conversationID: work, body: "pair \(round).\(half)", score: 1,
                                createdAt: referenceDate)
                            try message.insert(db)
                        }
                    }
                }
            } catch {
                failure.value = error
            }
            done.signal()
        }.start()
        var counts: Set<Int> = []
        var writerFinished = false
        while !writerFinished {
            writerFinished = done.wait(timeout: .now()) == .success
            let messages = try inWork.fetchAll(database, work)
            XCTAssertEqual(messages.count % 2, 0, "a statement saw half a transaction")
            let ids = messages.compactMap(\.id)
            XCTAssertEqual(ids, ids.sorted())
            XCTAssertEqual(ids.count, messages.count)
            if counts.isEmpty { firstReadDone.signal() }
            counts.insert(messages.count)
        }
        XCTAssertNil(failure.value)
        XCTAssertEqual(try inWork.fetchAll(database, work).count, before + 300)
        XCTAssertGreaterThan(counts.count, 1, "the reads never saw the table grow")
    }

    /// A write transaction open on another thread neither shows its rows to the one-statement read nor
    /// makes it wait.
    func testAnOpenWriteIsNeitherSeenNorWaitedFor() throws {
        let byBody = try Message.filter { $0.body == .parameter }.prepared()
        let database = self.database!
        let work = self.work
        let inserted = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        Thread {
            try? database.write { db in
                var message = Message(id: nil, conversationID: work, body: "uncommitted", score: 0, createdAt: referenceDate)
                try message.insert(db)
                inserted.signal()
                release.wait()
            }
            finished.signal()
        }.start()
        XCTAssertEqual(inserted.wait(timeout: .now() + 10), .success)
        XCTAssertNil(try byBody.fetchOne(database, "uncommitted"))
        XCTAssertEqual(try byBody.fetchAll(database, "body 1").count, 1)
        release.signal()
        XCTAssertEqual(finished.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(try byBody.fetchOne(database, "uncommitted")?.body, "uncommitted")
    }

    /// A call that fails gives its reader back: with one reader, later reads still get it.
    func testAFailedCallGivesItsReaderBack() throws {
        var configuration = Configuration(encryption: .passphrase("one reader"))
        configuration.readerCount = 1
        let directory = try TemporaryDirectory()
        let single = try Database(path: directory.path("one.db"), configuration: configuration)
        defer { try? single.close() }
        try single.write { db in
            try db.upgradeSchema(for: [Conversation.self, Message.self])
            _ = try insertWorkAndOldConversations(db)
        }
        let byID = try Conversation.filter { $0.id == .parameter }.prepared()
        for _ in 0..<3 {
            XCTAssertThrowsError(try byID.fetchOne(single, arguments: [1, 2])) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
            XCTAssertThrowsError(try byID.fetchAll(single, 1, 2)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .range)
            }
        }
        XCTAssertEqual(try byID.fetchOne(single, 1)?.title, "work")
        XCTAssertEqual(try single.read { db in try byID.fetchOne(db, 2)?.title }, "old")
    }

    /// Without a reader pool (in memory, `readerCount` 0) the call runs as a `read` does, on the writer.
    func testDatabasesWithoutReadersRunItOnTheWriter() throws {
        let memory = try Database.inMemory()
        var configuration = Configuration(encryption: .passphrase("writer only"))
        configuration.readerCount = 0
        let directory = try TemporaryDirectory()
        let writerOnly = try Database(path: directory.path("writer.db"), configuration: configuration)
        defer { try? writerOnly.close() }
        let byArchived = try Conversation.filter { $0.archived == .parameter }.prepared()
        for database in [memory, writerOnly] {
            try database.write { db in
                try db.upgradeSchema(for: [Conversation.self, Message.self])
                _ = try insertWorkAndOldConversations(db)
            }
            XCTAssertEqual(try byArchived.fetchAll(database, true).map(\.title), ["old"])
            XCTAssertEqual(try byArchived.fetchOne(database, arguments: [false])?.title, "work")
        }
    }

    func testAClosedDatabaseRefuses() throws {
        let byID = try Message.filter { $0.id == .parameter }.prepared()
        try database.close()
        XCTAssertThrowsError(try byID.fetchOne(database, 1)) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
        }
        XCTAssertThrowsError(try byID.fetchAll(database, arguments: [1])) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
        }
    }
}
