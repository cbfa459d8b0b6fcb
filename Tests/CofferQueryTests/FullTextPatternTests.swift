import Coffer
import CofferTestSupport
import XCTest

/// Full-text patterns: the MATCH text each builds, what each finds combined with filters and joins, and
/// search-box input that never raises an FTS syntax error.
final class FullTextPatternTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws {
        database = try Database.inMemory()
        _ = try database.write { db in
            try db.upgradeSchema(for: [ChatMessage.self, ChatConversation.self])
            try db.execute(sql: "INSERT INTO conversation(id, title) VALUES (1, 'family'), (2, 'work')")
            let bodies = [
                (1, "mum", "新年快乐 happy new year"),
                (1, "dad", "happy birthday 生日快乐"),
                (2, "boss", "the quarterly report is due"),
                (2, "ana", "report the bug: \"quoted\" (parens) -minus NEAR 😀"),
                (1, "mum", "新年 will be at grandma's, the new house"),
            ]
            for (conversation, sender, body) in bodies {
                var message = ChatMessage(id: nil, conversationID: Int64(conversation), sender: sender, body: body)
                try message.insert(db)
            }
        }
    }

    private func ids(_ pattern: FullTextPattern) throws -> [Int64] {
        try database.read { db in try ChatMessage.matching(pattern).order { $0.id.asc }.fetchAll(db).compactMap(\.id) }
    }

    func testMatchExpressions() throws {
        XCTAssertEqual(try FullTextPattern.term("hello").matchExpression(), "\"hello\"")
        XCTAssertEqual(try FullTextPattern.term("新年").matchExpression(), "\"新年*\"")
        XCTAssertEqual(try FullTextPattern.phrase("say \"hi\" 世界!").matchExpression(), "\"say  hi  世界*\"")
        XCTAssertEqual(try FullTextPattern.prefix("rep").matchExpression(), "\"rep*\"")
        XCTAssertEqual(try FullTextPattern.near(["a", "b"], distance: 3).matchExpression(), "\"a\" NEAR/3 \"b\"")
        let combined = (FullTextPattern.term("a") && .term("b")) || .term("c")
        // OR binds tighter than the implicit AND in FTS3's standard syntax (SQLCipher 3.4.1); the enhanced
        // syntax (SQLCipher 4's builds) binds AND tighter, so the groups are parenthesized there.
        XCTAssertEqual(
            try combined.matchExpression(),
            FullTextPattern.usesEnhancedQuerySyntax ? "(\"a\" OR \"c\") (\"b\" OR \"c\")" : "\"a\" OR \"c\" \"b\" OR \"c\"")
        let excluding = FullTextPattern.term("a").excluding(.term("b") || .term("c"))
        XCTAssertEqual(try excluding.matchExpression(), "\"a\"")
        XCTAssertEqual(excluding.excludedMatchExpression(), "\"b\" OR \"c\"")
        XCTAssertThrowsError(try (FullTextPattern.term("a").excluding(.term("b")) || .term("c")).matchExpression())
        XCTAssertThrowsError(try FullTextPattern.nothing.excluding(.term("b")).matchExpression())
        XCTAssertTrue(FullTextPattern.term("😀").matchesNothing)
    }

    func testTermsPhrasesPrefixesNearAndBooleanCombinations() throws {
        XCTAssertEqual(try ids(.term("happy")), [1, 2])
        XCTAssertEqual(try ids(.term("快乐")), [1, 2])
        XCTAssertEqual(try ids(.term("年快")), [1])
        XCTAssertEqual(try ids(.term("新")), [1, 5], "one CJK character")
        XCTAssertEqual(try ids(.phrase("happy new year")), [1])
        XCTAssertEqual(try ids(.phrase("new year happy")), [])
        XCTAssertEqual(try ids(.prefix("rep")), [3, 4])
        XCTAssertEqual(try ids(.near(["happy", "year"], distance: 2)), [1])
        XCTAssertEqual(try ids(.near(["new", "house"], distance: 1)), [5])
        XCTAssertEqual(try ids(.near(["新年", "house"], distance: 1)), [])
        XCTAssertEqual(try ids(.term("happy") && .term("生日")), [2])
        XCTAssertEqual(try ids(.term("birthday") || .term("quarterly")), [2, 3])
        XCTAssertEqual(try ids((.term("happy") && .term("year")) || .term("bug")), [1, 4])
        XCTAssertEqual(try ids(.term("新年").excluding(.term("happy"))), [5])
        XCTAssertEqual(try ids(.term("MUM")), [1, 5], "the sender column is indexed too, case folded")
    }

    func testMatchingCombinesWithFiltersOrJoinsAndWrites() throws {
        let filtered = try database.read { db in
            try ChatMessage.matching(.term("report")).filter { $0.sender == "boss" }.fetchAll(db).map(\.id)
        }
        XCTAssertEqual(filtered, [3])
        let either = try database.read { db in
            try ChatMessage.filter { ChatMessage.matches(.term("生日")) || $0.sender == "boss" }
                .order { $0.id.asc }.fetchAll(db).map(\.id)
        }
        XCTAssertEqual(either, [2, 3])
        let joined = try database.read { db in
            try ChatMessage.matching(.term("新年"))
                .join(ChatConversation.self) { message, conversation in message.conversationID == conversation.id }
                .filter { _, conversation in conversation.title == "family" }
                .fetchAll(db).map { $0.0.id }
        }
        XCTAssertEqual(joined, [1, 5])
        let deleted = try database.write { db in try ChatMessage.matching(.term("report")).deleteAll(db) }
        XCTAssertEqual(deleted, 2)
        XCTAssertEqual(try ids(.prefix("rep")), [])
    }

    func testSearchBoxInputNeverRaisesASyntaxError() throws {
        let inputs = [
            "", "   ", "\"", "\"\"", "\"unbalanced", "report\"", "*", "**", "rep*", "-", "--", "-report", "- report",
            "NEAR", "NEAR/3", "happy NEAR year", "OR", "OR happy", "happy OR", "happy OR OR year", "AND", "NOT happy",
            "(", ")", "(report", "report)", "((a) OR (b", "😀", "😀 happy", "新年😀", "^happy", "happy:", "col:happy",
            "'", "\\", "%", "_", "\u{0}", "-\"new year\"", "\"new year\" -happy", "\"happy new\" OR 生日", "\u{301}",
            "👨‍👩‍👧 family", "快乐*", "-快乐", "-happy -year",
        ]
        for input in inputs {
            XCTAssertNoThrow(try ids(.searchBox(input)), "input: \(input.debugDescription)")
        }
        XCTAssertEqual(try ids(.searchBox("")), [])
        XCTAssertEqual(try ids(.searchBox("happy 快乐")), [1, 2])
        XCTAssertEqual(try ids(.searchBox("\"happy new year")), [1])
        XCTAssertEqual(try ids(.searchBox("birthday OR quarterly")), [2, 3])
        XCTAssertEqual(try ids(.searchBox("happy -birthday")), [1])
        XCTAssertEqual(try ids(.searchBox("rep*")), [3, 4])
        XCTAssertEqual(try ids(.searchBox("(parens) \"quoted\" NEAR -minus")), [])
        XCTAssertEqual(try ids(.searchBox("(parens) \"quoted\" NEAR minus 😀")), [4])
        XCTAssertEqual(try ids(.searchBox("-happy -year")), [], "exclusions alone match nothing, without an error")
    }
}

@Table("conversation") struct ChatConversation: Codable {
    @Column(primaryKey: true) var id: Int64?
    var title: String
}
