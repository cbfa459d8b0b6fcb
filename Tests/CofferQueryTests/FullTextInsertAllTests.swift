import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `insertAll` on a table with a full-text index: the rows are indexed in one segment instead of one
/// per row, with the same result as the triggers (FTS4's integrity-check), and every other write still
/// goes through the triggers.
final class FullTextInsertAllTests: XCTestCase {
    private func messages(_ count: Int, from first: Int = 0) -> [ChatMessage] {
        (first..<first + count).map { ChatMessage(id: nil, conversationID: 1, sender: "ana", body: "message \($0) 消息") }
    }

    private func segments(_ database: Database) throws -> Int {
        try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM chat_fts_segdir") ?? -1 }
    }

    private func found(_ pattern: FullTextPattern, _ database: Database) throws -> [Int64] {
        try database.read { try ChatMessage.matching(pattern).fetchAll($0).compactMap(\.id) }
    }

    private func checkIntegrity(_ database: Database) throws {
        try database.write { try ChatMessage.fullTextIndex.checkIntegrity($0) }
        let paused = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM coffer_fulltext_pause") }
        XCTAssertEqual(paused, 0, "the pause row is never committed")
        // A row indexed twice passes integrity-check (the newer segment wins) but counts twice in the
        // document total that BM25 reads: matchinfo's `n`, a native 32-bit integer.
        let (total, rows) = try database.read { db in
            let blob = try db.fetchValue(
                Data.self, sql: "SELECT matchinfo(chat_fts, 'n') FROM chat_fts WHERE chat_fts MATCH '消息' LIMIT 1")
            return (
                blob.map { $0.prefix(4).reversed().reduce(0) { $0 << 8 | Int($1) } },
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM chat")
            )
        }
        XCTAssertEqual(total, rows, "every row is indexed once")
    }

    func testInsertAllIndexesTheRowsInOneSegmentAndRawSQLStillGoesThroughTheTrigger() throws {
        let database = try Database.inMemory()
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        let rowIDs = try database.write { db in
            let rowIDs = try ChatMessage.insertAll(messages(300), db)
            try db.execute(sql: "INSERT INTO chat(conversationID, sender, body) VALUES (2, 'bo', 'raw 生的 row')")
            return rowIDs
        }
        XCTAssertEqual(rowIDs, Array(1...300))
        XCTAssertLessThanOrEqual(try segments(database), 2, "300 rows and one raw row, flushed together at the commit")
        XCTAssertEqual(try found(.term("消息"), database).count, 300)
        XCTAssertEqual(try found(.term("message"), database).count, 300)
        XCTAssertEqual(try found(.term("生的"), database), [301])
        try database.write { db in
            try db.execute(sql: "INSERT INTO chat(conversationID, sender, body) VALUES (3, 'cy', 'later 后来')")
        }
        XCTAssertEqual(try found(.term("后来"), database), [302])
        try checkIntegrity(database)
    }

    func testAFailedBatchLeavesNothingAndIgnoredRowsAreNotIndexed() throws {
        let database = try Database.inMemory()
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        try database.write { db in _ = try ChatMessage.insertAll(messages(10), db) }
        var duplicate = messages(5, from: 100)
        duplicate[3].id = 2
        XCTAssertThrowsError(try database.write { db in _ = try ChatMessage.insertAll(duplicate, db) })
        XCTAssertEqual(try found(.term("103"), database), [])
        // The failed batch turned the connection's triggers back on: raw SQL is indexed, in the same
        // transaction as a failed batch too.
        try database.write { db in
            XCTAssertThrowsError(try ChatMessage.insertAll(duplicate, db))
            try db.execute(sql: "INSERT INTO chat(conversationID, sender, body) VALUES (2, 'bo', 'after 之后')")
        }
        XCTAssertEqual(try found(.term("之后"), database), [11])
        try database.write { try $0.execute(sql: "DELETE FROM chat WHERE id = 11") }
        let kept = try database.write { db in try ChatMessage.insertAll(duplicate, db, onConflict: .ignore) }
        XCTAssertEqual(kept, [11, 12, 13, 0, 14])
        XCTAssertEqual(try found(.term("103"), database), [], "the ignored row's text is not indexed")
        XCTAssertEqual(try found(.term("104"), database), [14])
        try checkIntegrity(database)
    }

    func testOtherTriggersOrATriggerNotYetUpgradedTakeThePerRowPath() throws {
        let database = try Database.inMemory()
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        // The AFTER INSERT trigger a file had before the pause existed: it ignores the pause row.
        try database.write { db in
            try db.execute(sql: "DROP TRIGGER chat_fts_after_insert")
            try db.execute(
                sql: """
                    CREATE TRIGGER chat_fts_after_insert AFTER INSERT ON chat BEGIN
                    INSERT INTO chat_fts(docid, body, sender) VALUES (new.rowid, new.body, new.sender); END
                    """)
            _ = try ChatMessage.insertAll(messages(20), db)
        }
        try checkIntegrity(database)
        // An app's own trigger on the content table.
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE audit(n INTEGER)")
            try db.execute(sql: "CREATE TRIGGER chat_audit AFTER INSERT ON chat BEGIN INSERT INTO audit VALUES (new.id); END")
            _ = try ChatMessage.insertAll(messages(20, from: 20), db)
        }
        XCTAssertEqual(try found(.term("消息"), database).count, 40)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM audit") }, 20)
        try checkIntegrity(database)
    }

    func testARowReplacedThroughTheTablesOwnConflictClauseLeavesTheIndex() throws {
        let database = try Database.inMemory()
        try database.write { db in
            try db.execute(
                sql: """
                    CREATE TABLE chat(id INTEGER PRIMARY KEY ON CONFLICT REPLACE, conversationID INTEGER NOT NULL,
                        sender TEXT NOT NULL, body TEXT NOT NULL)
                    """)
        }
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        let first = [ChatMessage(id: 1, conversationID: 1, sender: "ana", body: "old 旧的")]
        let second = [ChatMessage(id: 1, conversationID: 1, sender: "ana", body: "new 新的")]
        _ = try database.write { try ChatMessage.insertAll(first, $0) }
        _ = try database.write { try ChatMessage.insertAll(second, $0) }
        XCTAssertEqual(try found(.term("旧的"), database), [], "the replaced row's words left the index")
        XCTAssertEqual(try found(.term("新的"), database), [1])
        try database.write { try ChatMessage.fullTextIndex.checkIntegrity($0) }
    }
}
