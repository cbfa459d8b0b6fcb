import Coffer
import Foundation
import XCTest

/// The lazy cursor decodes one record at a time: memory stays flat over a large result.
final class RecordCursorTests: XCTestCase {
    func testCursorOverTwoHundredThousandRowsKeepsMemoryFlat() throws {
        let database = try makeSchemaDatabase()
        let rowCount = 200_000
        let body = String(repeating: "x", count: 300)
        try database.write { db in
            var conversation = Conversation(id: nil, title: "big", archived: false)
            try conversation.insert(db)
            let conversationID = try XCTUnwrap(conversation.id)
            try Message.insertAll(
                (0..<rowCount).lazy.map {
                    Message(id: nil, conversationID: conversationID, body: body + "\($0)", score: 1, createdAt: referenceDate)
                },
                db)
        }
        try database.read { db in
            let cursor = try Message.order { $0.id.asc }.cursor(db)
            let start = residentBytes()
            var peak = start
            var count = 0
            var lastID: Int64 = 0
            while let message = try cursor.next() {
                count += 1
                XCTAssertGreaterThan(message.id ?? 0, lastID)
                lastID = message.id ?? 0
                if count % 10_000 == 0 { peak = max(peak, residentBytes()) }
            }
            XCTAssertEqual(count, rowCount)
            XCTAssertNil(try cursor.next(), "an exhausted cursor stays exhausted")
            // The decoded rows weigh over 60 MB in all; a cursor holds one at a time.
            XCTAssertLessThan(peak - start, 20 << 20, "resident memory grew by \(peak - start) bytes")
            // The connection is usable again once the cursor is done.
            XCTAssertEqual(try Message.fetchCount(db), rowCount)
        }
    }

    func testAnAbandonedCursorReleasesItsStatement() throws {
        let database = try makeSchemaDatabase()
        try database.write { db in
            try Conversation.insertAll((0..<3).map { Conversation(id: nil, title: "\($0)", archived: false) }, db)
            do {
                let cursor = try Conversation.order { $0.id.asc }.cursor(db)
                XCTAssertEqual(try cursor.next()?.title, "0")
            }
            let again = try Conversation.order { $0.id.asc }.cursor(db)
            var titles: [String] = []
            try again.forEach { titles.append($0.title) }
            XCTAssertEqual(titles, ["0", "1", "2"])
        }
    }
}

/// The process's resident set size, from /proc (0 where unavailable).
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = statm.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}
