import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// `matching(_:)` drives a query from the index: SQLite reads the index's hits first and looks each row
/// up by rowid (so a LIMIT stops the index), and the results equal the `rowid IN (…)` filter's for every
/// other clause a query can have.
final class FullTextQueryPlanTests: XCTestCase {
    /// Whether a plan step searches `chat` by key: SQLite 3.15 names it `chat`, 3.49 `main.chat` when the
    /// query names the schema (a query driven by the index's hits reads `main."chat"`).
    private static func searchesChat(_ step: String?) -> Bool {
        guard let step else { return false }
        return step.hasPrefix("SEARCH chat USING") || step.hasPrefix("SEARCH main.chat USING")
    }

    private var database: Database!

    override func setUpWithError() throws {
        database = try Database.inMemory()
        _ = try database.write { db in
            try db.upgradeSchema(for: [ChatMessage.self, ChatConversation.self])
            try db.execute(sql: "INSERT INTO conversation(id, title) VALUES (1, 'family'), (2, 'work'), (3, 'club')")
            // An index on the filtered column: a plain join would let SQLite read it first and run the
            // MATCH once per row.
            try db.execute(sql: "CREATE INDEX chat_conversation ON chat(conversationID)")
            let words = ["alpha", "beta", "gamma", "delta", "report", "报告", "会议", "你好", "😀"]
            var generator = SeededGenerator(seed: 0xF7_5023)
            for _ in 0..<300 {
                let body = (0..<Int.random(in: 2...7, using: &generator)).map { _ in words.randomElement(using: &generator)! }
                var message = ChatMessage(
                    id: nil, conversationID: Int64.random(in: 1...3, using: &generator),
                    sender: ["mum", "boss", "ana"].randomElement(using: &generator)!, body: body.joined(separator: " "))
                try message.insert(db)
            }
        }
    }

    /// The plan's steps, in SQLite 3.15's words and 3.49's alike: since 3.36 a step reads "SCAN chat" where
    /// it read "SCAN TABLE chat", so the word is dropped here.
    private func plan(_ rendered: (sql: String, arguments: StatementArguments)) throws -> [String] {
        try database.read { db in
            try db.fetchAll(sql: "EXPLAIN QUERY PLAN " + rendered.sql, arguments: rendered.arguments).map { row in
                let detail: String = row["detail"] ?? ""
                return detail.replacingOccurrences(of: "SCAN TABLE ", with: "SCAN ")
                    .replacingOccurrences(of: "SEARCH TABLE ", with: "SEARCH ")
            }
        }
    }

    func testMatchingReadsTheIndexFirstAndEachRowByRowid() throws {
        let page = ChatMessage.matching(.term("alpha")).limit(50)
        let rendered: [(String, (sql: String, arguments: StatementArguments))] = [
            ("page", try page.build()),
            ("indexed filter", try ChatMessage.matching(.term("alpha")).filter { $0.conversationID == 2 }.limit(10).build()),
            ("ordered", try ChatMessage.matching(.prefix("al")).order { $0.sender.desc }.limit(5, offset: 5).build()),
            ("count", try ChatMessage.matching(.term("报告")).filter { $0.conversationID == 2 }.countFragment.render()),
            ("select", try ChatMessage.matching(.term("beta")).select { $0.sender }.build()),
            (
                "join",
                try ChatMessage.matching(.term("gamma"))
                    .join(ChatConversation.self) { message, conversation in message.conversationID == conversation.id }
                    .build()
            ),
        ]
        for (name, query) in rendered {
            let steps = try plan(query)
            XCTAssertTrue(steps.first?.hasPrefix("SCAN chat_fts VIRTUAL TABLE INDEX") == true, "\(name): \(steps)")
            XCTAssertTrue(Self.searchesChat(steps.dropFirst().first), "\(name): \(steps)")
            let collectsOrScans = steps.contains {
                $0.contains("LIST SUBQUERY") || $0.hasPrefix("SCAN chat ") || $0.hasPrefix("SCAN main.chat ")
            }
            XCTAssertFalse(collectsOrScans, "\(name): \(steps)")
        }
        let (sql, _) = try page.build()
        XCTAssertTrue(sql.contains("CROSS JOIN main.\"chat\""), sql)
        // The filter form, for contrast: SQLite collects the whole list of hits before the first row.
        let filterPlan = try plan(ChatMessage.filter { _ in ChatMessage.matches(.term("alpha")) }.limit(50).build())
        XCTAssertTrue(filterPlan.contains { $0.contains("LIST SUBQUERY") }, "\(filterPlan)")
    }

    func testMatchingFindsWhatTheFilterFormFindsWithEveryClause() throws {
        let patterns: [FullTextPattern] = [
            .term("alpha"), .prefix("be"), .term("报告"), .phrase("alpha beta"), .term("alpha").excluding(.term("beta")),
            .searchBox("会议 -gamma"), .term("absent"), .term("😀"),
        ]
        try database.read { db in
            for pattern in patterns {
                let driven = ChatMessage.matching(pattern)
                let filtered = ChatMessage.filter { _ in ChatMessage.matches(pattern) }
                let label = "\(pattern)"
                // No order given: the index's order, ascending rowid, like the table's.
                XCTAssertEqual(try driven.fetchAll(db), try filtered.fetchAll(db), label)
                XCTAssertEqual(
                    try driven.filter { $0.conversationID == 2 }.order { [$0.sender.asc, $0.id.desc] }.limit(7, offset: 3)
                        .fetchAll(db),
                    try filtered.filter { $0.conversationID == 2 }.order { [$0.sender.asc, $0.id.desc] }.limit(7, offset: 3)
                        .fetchAll(db), label)
                XCTAssertEqual(try driven.fetchCount(db), try filtered.fetchCount(db), label)
                XCTAssertEqual(try driven.limit(5).fetchCount(db), try filtered.limit(5).fetchCount(db), label)
                XCTAssertEqual(try driven.exists(db), try filtered.exists(db), label)
                XCTAssertEqual(
                    try driven.select { $0.sender }.fetchAll(db), try filtered.select { $0.sender }.fetchAll(db), label)
                XCTAssertEqual(
                    try driven.matching(.term("gamma")).fetchAll(db),
                    try filtered.filter { _ in ChatMessage.matches(.term("gamma")) }.fetchAll(db), label)
                XCTAssertEqual(
                    try driven.filter(sql: "rowid > \(100) AND rowid % 2 = 0").fetchAll(db),
                    try filtered.filter(sql: "rowid > \(100) AND rowid % 2 = 0").fetchAll(db), label)
                let join = { (query: Query<ChatMessage>) in
                    try query.join(ChatConversation.self) { message, conversation in message.conversationID == conversation.id }
                        .filter { _, conversation in conversation.title != "club" }.fetchAll(db).map { $0.0.id }
                }
                XCTAssertEqual(try join(driven), try join(filtered), label)
            }
        }
        let expected = try database.read { db in
            try ChatMessage.filter { ChatMessage.matches(.term("delta")) && $0.conversationID == 1 }.fetchCount(db)
        }
        XCTAssertGreaterThan(expected, 0)
        let updated = try database.write { db in
            try ChatMessage.matching(.term("delta")).filter { $0.conversationID == 1 }.updateAll(db) {
                [$0.sender.set(to: "edited")]
            }
        }
        XCTAssertEqual(updated, expected)
        let deleted = try database.write { db in try ChatMessage.matching(.term("edited")).deleteAll(db) }
        XCTAssertEqual(deleted, expected)
        try database.write { db in
            XCTAssertEqual(try ChatMessage.matching(.term("edited")).fetchCount(db), 0)
            try db.execute(sql: "INSERT INTO chat_fts(chat_fts) VALUES ('integrity-check')")
        }
    }

    func testPreparedMatchingBindsTheMatchTextAndFindsWhatMatchingFinds() throws {
        let prepared = try ChatMessage.matching(.parameter).limit(50).prepared()
        XCTAssertEqual(prepared.parameterCount, 1)
        XCTAssertTrue(prepared.sql.contains("MATCH ?"), prepared.sql)
        let steps = try plan((prepared.sql, ["\"alpha\"", 50]))
        XCTAssertTrue(steps.first?.hasPrefix("SCAN chat_fts VIRTUAL TABLE INDEX") == true, "\(steps)")
        XCTAssertTrue(Self.searchesChat(steps.dropFirst().first), "\(steps)")
        let patterns: [FullTextPattern] = [
            .term("alpha"), .prefix("be"), .term("报告"), .term("告会"), .phrase("alpha beta"), .near(["gamma", "delta"]),
            .term("alpha") || .term("你好"), .term("report") && .prefix("ga"), .term("absent"),
        ]
        try database.read { db in
            var found = 0
            for pattern in patterns {
                let expected = try ChatMessage.matching(pattern).limit(50).fetchAll(db)
                XCTAssertEqual(try prepared.fetchAll(db, try pattern.matchExpression()), expected, "\(pattern)")
                found += expected.count
            }
            XCTAssertGreaterThan(found, 100)
        }
        // A second source on a prepared query is a filter, as with a pattern.
        let both = try ChatMessage.matching(.parameter).matching(.term("beta")).prepared()
        try database.read { db in
            XCTAssertEqual(
                try both.fetchAll(db, try FullTextPattern.term("alpha").matchExpression()),
                try ChatMessage.matching(.term("alpha") && .term("beta")).fetchAll(db))
        }
    }
}
