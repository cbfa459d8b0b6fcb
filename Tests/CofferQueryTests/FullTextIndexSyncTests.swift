import Coffer
import CofferTestSupport
import XCTest

/// A declared full-text index stays in step with its content table for every kind of write, in the
/// writer's transaction: records, updateAll/deleteAll, raw SQL, INSERT OR REPLACE, rollback.
final class FullTextIndexSyncTests: XCTestCase {
    private func ids(_ pattern: FullTextPattern, _ database: Database) throws -> [Int64] {
        try database.read { db in try ChatMessage.matching(pattern).order { $0.id.asc }.fetchAll(db).compactMap(\.id) }
    }

    private func checkIntegrity(_ database: Database) throws {
        try database.write { try ChatMessage.fullTextIndex.checkIntegrity($0) }
    }

    func testUpgradeSchemaCreatesTheIndexAndFillsItFromExistingRows() throws {
        let database = try Database.inMemory()
        try database.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE chat(id INTEGER PRIMARY KEY, conversationID INTEGER NOT NULL, sender TEXT NOT NULL, body TEXT NOT NULL)"
            )
            try db.execute(sql: "INSERT INTO chat VALUES (1, 1, 'li', '早上好 everyone')")
        }
        let report = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        XCTAssertEqual(report.createdFullTextIndexes, ["chat_fts"])
        XCTAssertEqual(try ids(.term("上好"), database), [1])
        let again = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        XCTAssertEqual(again.createdFullTextIndexes, [], "an index in place is left alone")
        let triggers = try database.read { db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'chat'")
        }
        XCTAssertEqual(triggers, 4)
        try checkIntegrity(database)
    }

    func testEveryKindOfWriteKeepsTheIndexInStep() throws {
        let database = try Database.inMemory()
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        try database.write { db in
            var first = ChatMessage(id: nil, conversationID: 1, sender: "ana", body: "lunch at noon 午饭")
            try first.insert(db)
            var second = ChatMessage(id: nil, conversationID: 2, sender: "bo", body: "dinner 晚饭 tonight")
            try second.insert(db)
        }
        XCTAssertEqual(try ids(.term("午饭"), database), [1])
        // A record update, a query-builder update, a raw UPDATE.
        try database.write { db in
            var first = try XCTUnwrap(try ChatMessage.filter { $0.id == 1 }.fetchOne(db))
            first.body = "brunch 早午饭"
            try first.update(db)
        }
        XCTAssertEqual(try ids(.term("lunch"), database), [])
        XCTAssertEqual(try ids(.term("brunch"), database), [1])
        XCTAssertEqual(try ids(.term("午饭"), database), [1])
        try database.write { db in
            _ = try ChatMessage.filter { $0.conversationID == 2 }.updateAll(db) { [$0.body.set(to: "breakfast 早饭")] }
        }
        XCTAssertEqual(try ids(.term("晚饭"), database), [])
        XCTAssertEqual(try ids(.term("早饭"), database), [2])
        try database.write { try $0.execute(sql: "UPDATE chat SET sender = 'carla' WHERE id = 2") }
        XCTAssertEqual(try ids(.term("carla"), database), [2])
        XCTAssertEqual(try ids(.term("bo"), database), [])
        // An update that leaves the indexed columns alone, and one that moves the rowid.
        try database.write { try $0.execute(sql: "UPDATE chat SET conversationID = 9") }
        try database.write { try $0.execute(sql: "UPDATE chat SET id = 20 WHERE id = 2") }
        XCTAssertEqual(try ids(.term("carla"), database), [20])
        // Raw INSERT, INSERT OR REPLACE over an existing id, record delete, deleteAll, raw DELETE.
        try database.write { db in
            try db.execute(sql: "INSERT INTO chat(id, conversationID, sender, body) VALUES (30, 3, 'dev', 'raw 插入')")
            try db.execute(
                sql: "INSERT OR REPLACE INTO chat(id, conversationID, sender, body) VALUES (30, 3, 'dev', 'replaced 替换')")
        }
        XCTAssertEqual(try ids(.term("插入"), database), [])
        XCTAssertEqual(try ids(.term("替换"), database), [30])
        try checkIntegrity(database)
        try database.write { db in
            let first = try XCTUnwrap(try ChatMessage.filter { $0.id == 1 }.fetchOne(db))
            try first.delete(db)
            _ = try ChatMessage.filter { $0.id == 20 }.deleteAll(db)
        }
        XCTAssertEqual(try ids(.term("brunch"), database), [])
        XCTAssertEqual(try ids(.term("carla"), database), [])
        try database.write { try $0.execute(sql: "DELETE FROM chat") }
        XCTAssertEqual(try ids(.term("dev"), database), [])
        try checkIntegrity(database)
    }

    func testARolledBackWriteLeavesNoTermsBehind() throws {
        let database = try Database.inMemory()
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        struct Abort: Error {}
        XCTAssertThrowsError(
            try database.write { db in
                var message = ChatMessage(id: nil, conversationID: 1, sender: "x", body: "ghost 幽灵")
                try message.insert(db)
                throw Abort()
            })
        XCTAssertEqual(try ids(.term("幽灵"), database), [])
        try checkIntegrity(database)
    }

    func testRebuildOptimizeAndMergeKeepResultsAndTheMergerMergesSegments() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("merge.db"))
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        // One transaction per row: one segment each.
        for number in 0..<40 {
            try database.write { db in
                var message = ChatMessage(id: nil, conversationID: 1, sender: "s", body: "message \(number) 消息")
                try message.insert(db)
            }
        }
        let index = ChatMessage.fullTextIndex
        XCTAssertTrue(try database.read { try index.needsMerge($0) })
        let merger = FullTextMerger(database: database, index: index, interval: 3600)
        XCTAssertGreaterThan(try merger.mergeUntilDone(), 0)
        merger.stop()
        XCTAssertFalse(try database.read { try index.needsMerge($0) })
        XCTAssertEqual(try ids(.term("消息"), database).count, 40)
        try database.write { db in
            try index.optimize(db)
            try index.rebuild(db)
            XCTAssertFalse(try index.merge(db))
        }
        let segments = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM chat_fts_segdir") }
        XCTAssertEqual(segments, 1)
        XCTAssertEqual(try ids(.term("消息"), database).count, 40)
        try checkIntegrity(database)
    }

    func testTheMergerMergesInTheBackgroundBetweenTheAppsTransactions() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("background.db"))
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        let index = ChatMessage.fullTextIndex
        let merged = expectation(description: "a background pass merged segments")
        merged.assertForOverFulfill = false
        let merger = FullTextMerger(database: database, index: index, interval: 0.01) { result in
            if case .success(let steps) = result, steps > 0 { merged.fulfill() }
        }
        // The app keeps writing, one transaction per row, while the merger runs.
        for number in 0..<40 {
            try database.write { db in
                var message = ChatMessage(id: nil, conversationID: 1, sender: "s", body: "note \(number) 笔记")
                try message.insert(db)
            }
        }
        wait(for: [merged], timeout: 30)
        merger.stop()
        XCTAssertNil(merger.lastError)
        XCTAssertEqual(try ids(.term("笔记"), database).count, 40)
        try checkIntegrity(database)
    }
}
