import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of Observation.md, compiled and run as written.
final class ObservationArticleTests: XCTestCase {
    private func messageDatabase() throws -> (TemporaryDirectory, Database) {
        let (directory, database) = try articleDatabase()
        try database.write { db in
            try db.execute(sql: "CREATE TABLE message(id INTEGER PRIMARY KEY, text TEXT NOT NULL, unread BOOLEAN NOT NULL)")
        }
        return (directory, database)
    }

    /// "In brief": a list (callback on the main queue) and a badge (async sequence).
    @MainActor
    func testInBrief() async throws {
        typealias Message = QueriesArticle.Message
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        _ = try await database.write { db in try db.upgradeSchema(for: [Message.self]) }
        let shown = Received<[String]>()
        let show: @Sendable ([Message]) -> Void = { messages in shown.append(messages.map(\.body)) }
        let badge = Badge()

        let chat = database.observe({ db in
            try Message.filter { $0.conversationID == 1 }.order { $0.id.desc }.fetchAll(db)
        }) { messages in show(messages) }  // on the main queue; observes while `chat` is kept
        let counting = Task {
            for try await unread in database.observe({ db in try Message.filter { $0.score == 0 }.fetchCount(db) }) {
                badge.text = "\(unread)"
            }
        }

        await settleOnMain { shown.values.last == [] }
        await settleOnMain { badge.text == "0" }
        try await database.write { db in
            var message = Message(id: nil, conversationID: 1, body: "hello", score: 0)
            try message.insert(db)
        }
        await settleOnMain { shown.values.last == ["hello"] }
        await settleOnMain { badge.text == "1" }
        try await database.write { db in
            var message = Message(id: nil, conversationID: 2, body: "elsewhere", score: 0)
            try message.insert(db)
        }
        await settleOnMain { badge.text == "2" }
        chat.cancel()
        counting.cancel()
        XCTAssertEqual(shown.values.first, [])
        XCTAssertEqual(shown.values.last, ["hello"])
        XCTAssertEqual(badge.text, "2")
    }

    func testObservingAValueWithACallback() throws {
        let (directory, database) = try messageDatabase()
        defer { withExtendedLifetime(directory) {} }
        let badges = Received<Int>()
        @Sendable func showBadge(_ unread: Int) { badges.append(unread) }

        let handle = database.observe(on: .main) { db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM message WHERE unread") ?? 0
        } onChange: { unread in
            showBadge(unread)  // 0 at first, then after each commit that changes it
        }

        XCTAssertEqual(badges.wait { $0 == [0] }, [0])
        try database.write { db in
            try db.execute(sql: "INSERT INTO message(text, unread) VALUES (?, ?)", arguments: ["hi", true])
        }
        XCTAssertEqual(badges.wait { $0 == [0, 1] }, [0, 1])

        handle.cancel()  // no value is delivered after this

        try database.write { db in
            try db.execute(sql: "INSERT INTO message(text, unread) VALUES (?, ?)", arguments: ["again", true])
        }
        XCTAssertEqual(badges.wait(timeout: 0.5) { $0.count > 2 }, [0, 1])
    }

    func testObservingAValueAsASequence() async throws {
        let (directory, database) = try messageDatabase()
        defer { withExtendedLifetime(directory) {} }
        let badges = Received<Int>()
        @Sendable func showBadge(_ unread: Int) { badges.append(unread) }
        try await database.write { db in
            try db.execute(sql: "INSERT INTO message(text, unread) VALUES ('a', 1), ('b', 1)")
        }
        let writer = Task {
            try await Task.sleep(nanoseconds: 200_000_000)
            try await database.write { db in try db.execute(sql: "UPDATE message SET unread = 0") }
        }

        for try await unread in database.observe({ db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM message WHERE unread") ?? 0
        }) {
            showBadge(unread)
            if unread == 0 { break }  // leaving the loop ends the observation
        }

        try await writer.value
        XCTAssertEqual(badges.values, [2, 0])
    }

    func testFollowingEveryChange() async throws {
        let (directory, database) = try messageDatabase()
        defer { withExtendedLifetime(directory) {} }
        let events = Received<String>()
        @Sendable func index(_ rowID: Int64) { events.append("index \(rowID)") }
        @Sendable func reindex(_ rowID: Int64, columns: Set<String>?) {
            events.append("reindex \(rowID) \(columns.map { $0.sorted().joined(separator: ",") } ?? "any")")
        }
        @Sendable func unindex(_ rowID: Int64) { events.append("unindex \(rowID)") }
        @Sendable func reindexEverything(external: Bool) { events.append("everything external=\(external)") }

        let changes = database.changes(in: ["message"])  // from now on, one per commit
        let indexer = Task {
            for await change in changes {
                if change.isWholeDatabase {  // rows unknown: another process, a bulk delete…
                    reindexEverything(external: change.isExternal)
                    continue
                }
                for row in change.rows {
                    switch row.kind {
                    case .insert: index(row.rowID)
                    case .update: reindex(row.rowID, columns: row.updatedColumns)  // nil: any column may have changed
                    case .delete: unindex(row.rowID)
                    }
                }
            }
        }

        try await database.write { db in
            try db.execute(sql: "INSERT INTO message(id, text, unread) VALUES (1, 'a', 1), (2, 'b', 1)")
        }
        try await database.write { db in try db.execute(sql: "UPDATE message SET unread = 0 WHERE id = 2") }
        try await database.write { db in try db.execute(sql: "DELETE FROM message WHERE id = 1") }
        try await database.write { db in try db.execute(sql: "DELETE FROM message") }  // no WHERE: whole database
        _ = await events.settle { $0.count >= 5 }
        // Another Database on the same file: an external change set.
        // (`database.configuration` has its secret removed: the key is given again.)
        let other = try Database(path: database.path, configuration: articleConfiguration)
        try await other.write { db in try db.execute(sql: "INSERT INTO message(text, unread) VALUES ('c', 1)") }
        try other.close()
        let seen = await events.settle { $0.count >= 6 }
        indexer.cancel()

        // (Closing the other Database may restart the WAL: one more external change set, possibly.)
        XCTAssertTrue(seen.dropFirst(6).allSatisfy { $0 == "everything external=true" }, "\(seen)")
        XCTAssertEqual(
            Array(seen.prefix(6)),
            [
                "index 1", "index 2", "reindex 2 unread", "unindex 1", "everything external=false",
                "everything external=true",
            ])
    }

    /// The fields the article names, read directly off a change set.
    func testChangeSetFields() async throws {
        let (directory, database) = try messageDatabase()
        defer { withExtendedLifetime(directory) {} }
        let changes = database.changes(in: ["message"])
        try await database.write { db in
            try db.execute(sql: "INSERT INTO message(id, text, unread) VALUES (5, 'a', 1)")
            try db.execute(sql: "UPDATE message SET text = 'b', unread = 0 WHERE id = 5")
        }
        var iterator = changes.makeAsyncIterator()
        let change = await iterator.next()
        XCTAssertEqual(change?.isWholeDatabase, false)
        XCTAssertEqual(change?.isExternal, false)
        XCTAssertEqual(
            change?.rows,
            [
                RowChange(table: "message", rowID: 5, kind: .insert),
                RowChange(table: "message", rowID: 5, kind: .update, updatedColumns: ["text", "unread"]),
            ])
    }
}

/// A label's stand-in for "In brief": its text, set on the main actor.
@MainActor final class Badge {
    var text = ""
}

/// Waits up to 10 seconds, sleeping on the main actor, until `condition` holds.
@MainActor private func settleOnMain(until condition: () -> Bool) async {
    let deadline = Date().addingTimeInterval(10)
    while !condition(), Date() < deadline {
        try? await Task.sleep(nanoseconds: 10_000_000)
    }
}
