import Coffer
import CofferTestSupport
import XCTest

/// How many segments the index holds after single-row inserts: the triggers' statement savepoints make
/// FTS4 write one segment per row (the cause of W8's index cost), FTS4's own 16-way merge keeps every
/// level below 17 segments, and `merge` brings every level below its `minimumSegments`.
final class FullTextSegmentCountTests: XCTestCase {
    private func segmentsPerLevel(_ db: Connection) throws -> [Int] {
        try db.fetchAll(sql: "SELECT count(*) AS n FROM chat_fts_segdir GROUP BY level ORDER BY level").compactMap {
            $0["n"]
        }
    }

    func testSingleRowInsertsStayBoundedAndMergeCompactsThem() throws {
        let database = try Database.inMemory()
        _ = try database.write { try $0.upgradeSchema(for: [ChatMessage.self]) }
        let rows = 300
        try database.write { db in
            for number in 0..<rows {
                var message = ChatMessage(id: nil, conversationID: 1, sender: "ana", body: "message \(number) 消息")
                try message.insert(db)
            }
        }
        let written = try database.read { try segmentsPerLevel($0) }
        // One segment per row, merged 16 at a time: 300 = 1×256 + 2×16 + 12 rows' worth of segments.
        XCTAssertGreaterThan(written.reduce(0, +), 8, "one transaction of single-row inserts left \(written)")
        XCTAssertTrue(written.allSatisfy { $0 <= 16 }, "FTS4 merges 16 segments of a level into one: \(written)")

        try database.write { db in while try ChatMessage.fullTextIndex.merge(db, pages: 200, minimumSegments: 2) {} }
        let merged = try database.read { try segmentsPerLevel($0) }
        XCTAssertTrue(merged.allSatisfy { $0 < 2 }, "after merging every level holds at most one segment: \(merged)")
        XCTAssertFalse(try database.read { try ChatMessage.fullTextIndex.needsMerge($0, minimumSegments: 2) })
        let found = try database.read { try ChatMessage.matching(.term("消息")).fetchAll($0) }
        XCTAssertEqual(found.count, rows)
        try database.write { try ChatMessage.fullTextIndex.checkIntegrity($0) }
    }
}
