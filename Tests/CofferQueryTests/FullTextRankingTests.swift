import Coffer
import CofferTestSupport
import XCTest

/// Ranked search: BM25 order, filters, and highlights as ranges of the original text (CJK, emoji,
/// combining marks), plus snippets.
final class FullTextRankingTests: XCTestCase {
    private func database(_ bodies: [String]) throws -> Database {
        let database = try Database.inMemory()
        try database.write { db in
            _ = try db.upgradeSchema(for: [ChatMessage.self])
            for (number, body) in bodies.enumerated() {
                var message = ChatMessage(id: nil, conversationID: Int64(number % 2), sender: "s\(number)", body: body)
                try message.insert(db)
            }
        }
        return database
    }

    func testResultsComeBestFirstByBM25AndHonourFilters() throws {
        let database = try database([
            "a long message that mentions 火锅 once among many other words about the weekend plans",
            "火锅 火锅 火锅 tonight",
            "nothing relevant here",
            "火锅?",
        ])
        let results = try database.read { try ChatMessage.search(.term("火锅")).fetchAll($0) }
        XCTAssertEqual(results.map(\.record.id), [2, 4, 1])
        XCTAssertTrue(results.allSatisfy { $0.rank > 0 })
        XCTAssertEqual(results.map(\.rank), results.map(\.rank).sorted(by: >))
        let filtered = try database.read { db in
            try ChatMessage.search(.term("火锅")).filter { $0.conversationID == 0 }.limit(1).fetchAll(db)
        }
        XCTAssertEqual(filtered.map(\.record.id), [1])
        let unranked = try database.read { try ChatMessage.search(.term("火锅")).unranked().limit(2).fetchAll($0) }
        XCTAssertEqual(unranked.map(\.record.id), [1, 2], "index order, stopping at the limit")
        XCTAssertTrue(unranked.allSatisfy { $0.rank > 0 && !$0.highlights.isEmpty })
        // The same function from hand-written SQL.
        let raw = try database.read { db in
            try db.fetchAll(
                sql: """
                    SELECT docid, coffer_bm25(matchinfo(chat_fts, 'pcnalx'), 1.0, 0.0) AS r FROM chat_fts
                    WHERE chat_fts MATCH '"火锅*"' ORDER BY r DESC
                    """
            ).compactMap { $0["docid"] as Int64? }
        }
        XCTAssertEqual(raw, [2, 4, 1])
    }

    func testHighlightsAreRangesOfTheOriginalTextForCJKAndEmoji() throws {
        let body = "I ❤️ 你好世界你好 👨‍👩‍👧 Cafe\u{301} café 北京"
        let database = try database([body])
        func highlighted(_ pattern: FullTextPattern) throws -> [String] {
            let result = try XCTUnwrap(try database.read { try ChatMessage.search(pattern).fetchAll($0) }.first)
            let highlight = try XCTUnwrap(result.highlights.first { $0.column == "body" })
            XCTAssertEqual(highlight.text, body)
            return highlight.ranges.map { String(body[$0]) }
        }
        XCTAssertEqual(try highlighted(.term("世界")), ["世界"], "the pair after 界 is not highlighted")
        XCTAssertEqual(try highlighted(.term("好世界你")), ["好世界你"])
        XCTAssertEqual(try highlighted(.term("你好")), ["你好", "你好"])
        XCTAssertEqual(try highlighted(.term("北京")), ["北京"])
        XCTAssertEqual(try highlighted(.term("好")), ["好", "好"], "a single character, not the pair it starts")
        XCTAssertEqual(try highlighted(.term("cafe")), ["Cafe\u{301}", "café"], "combining marks stay with their letter")
    }

    func testSnippetsAreWindowsAroundTheFirstHit() throws {
        let filler = String(repeating: "lorem ipsum ", count: 20)
        let body = filler + "the 年会 party is on friday, 年会 starts at six " + filler
        let database = try database([body])
        let result = try XCTUnwrap(try database.read { try ChatMessage.search(.term("年会")).fetchAll($0) }.first)
        let snippet = try XCTUnwrap(result.snippet(maximumCharacters: 40))
        XCTAssertEqual(snippet.text.count, 40)
        XCTAssertEqual(snippet.highlights.map { String(body[$0]) }, ["年会", "年会"])
        XCTAssertEqual(snippet.marked(open: "<", close: ">"), "…psum the <年会> party is on friday, <年会> start…")
    }
}
