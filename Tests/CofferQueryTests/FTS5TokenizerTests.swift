import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Coffer's tokenizers in FTS5 tables, where the linked SQLite has FTS5 (SQLCipher 4): the same rows found
/// by the same queries as through FTS4, and a typed `unsupportedByLibrary` error where FTS5 is missing.
final class FTS5TokenizerTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var database: Database!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-fts5")
        database = try Database(path: directory.path("fts5.db"), configuration: Configuration(encryption: .passphrase("f")))
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    private static let articles = [
        "数据库的加密与恢复", "我们明天在北京开会", "北京烤鸭很好吃", "SQLite 数据库引擎 version 3.49",
        "加密数据库 SQLCipher", "東京の天気は晴れです", "서울의 날씨", "mixed 中文 and English words",
    ]

    /// The rowids `match` finds in `table`, sorted.
    private func rowIDs(_ table: String, _ match: String) throws -> [Int64] {
        try database.read { db in
            try db.fetchAll(sql: "SELECT rowid FROM \(table) WHERE \(table) MATCH ? ORDER BY rowid", arguments: [match])
                .map { try $0.decode(Int64.self, at: 0) }
        }
    }

    func testTheCJKTokenizerFindsTheSameRowsThroughFTS5AsThroughFTS4() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.fts5), "SQLite \(LinkedSQLite.version) has no FTS5")
        try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE article4 USING fts4(body, tokenize=coffer)")
            try db.execute(sql: "CREATE VIRTUAL TABLE article5 USING fts5(body, tokenize='coffer')")
            for text in Self.articles {
                try db.execute(sql: "INSERT INTO article4(body) VALUES (?)", arguments: [text])
                try db.execute(sql: "INSERT INTO article5(body) VALUES (?)", arguments: [text])
            }
        }
        // The tokenizer gives a CJK run's bigrams and its last character alone: a CJK string S is the phrase
        // of S's bigrams with a prefix last token — FTS4's `"S*"`, FTS5's `"S" *` (see tokenizer.c).
        let strings = ["数据库", "北京", "加密", "天気", "날씨", "中文", "据库的加", "京烤", "库", "SQLite", "english"]
        for text in strings {
            XCTAssertEqual(try rowIDs("article5", "\"\(text)\" *"), try rowIDs("article4", "\"\(text)*\""), text)
        }
        XCTAssertEqual(try rowIDs("article5", "\"数据库\" *"), [1, 4, 5])
        XCTAssertEqual(try rowIDs("article5", "\"京烤\" *"), [3])
        XCTAssertEqual(try rowIDs("article5", "\"北京\" * AND \"开会\" *"), [2])
        XCTAssertEqual(try rowIDs("article5", "\"sqlite\""), [4])
        // FTS5's own highlight() marks the tokens' byte ranges as the tokenizer reports them.
        let highlighted = try database.read { db in
            try db.fetchValue(
                String.self, sql: "SELECT highlight(article5, 0, '[', ']') FROM article5 WHERE article5 MATCH '\"鸭很\" *'")
        }
        XCTAssertEqual(highlighted?.hasPrefix("北京烤[鸭很"), true, highlighted ?? "nil")
    }

    func testThePinyinAndIdentifierTokenizersWorkInFTS5() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.fts5), "SQLite \(LinkedSQLite.version) has no FTS5")
        let names = ["张三", "吕布", "中国人", "資料庫", "单", "李四"]
        try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE contact USING fts5(name, tokenize='coffer_pinyin')")
            try db.execute(sql: "CREATE VIRTUAL TABLE account USING fts5(phone, tokenize='coffer_identifier')")
            for name in names { try db.execute(sql: "INSERT INTO contact(name) VALUES (?)", arguments: [name]) }
            try db.execute(sql: "INSERT INTO account(phone) VALUES ('+86 138 0013 8000'), ('ann@example.com')")
        }
        // Query phrases start with the pinyin tokenizer's query mark (0x01): one token per position.
        let mark = "\u{1}"
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)zhang san\""), [1])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)z s\""), [1])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)lv bu\""), [2])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)z g r\""), [3])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)中 guo\""), [3])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)资料库\""), [4], "traditional folds to simplified")
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)shan\""), [5])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)dan\""), [5])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)li si\""), [6])
        XCTAssertEqual(try rowIDs("contact", "\"\(mark)zhang si\""), [])
        XCTAssertEqual(try rowIDs("account", "\"1380013\""), [1])
        XCTAssertEqual(try rowIDs("account", "\"example\""), [2])
        XCTAssertEqual(try rowIDs("account", "\"0013 8000\""), [1])
    }

    func testAnFTS5TableThrowsUnsupportedOnALibraryWithoutFTS5() throws {
        try XCTSkipIf(LinkedSQLite.supports(.fts5), "SQLite \(LinkedSQLite.version) has FTS5")
        XCTAssertThrowsError(
            try database.write { try $0.execute(sql: "CREATE VIRTUAL TABLE t USING fts5(body, tokenize='coffer')") }
        ) { error in
            XCTAssertEqual((error as? CofferError)?.code, .unsupportedByLibrary, "\(error)")
            XCTAssertEqual((error as? CofferError)?.message, "no such module: fts5", "\(error)")
        }
        // The same index through FTS4 works on this library.
        try database.write { try $0.execute(sql: "CREATE VIRTUAL TABLE t USING fts4(body, tokenize=coffer)") }
    }
}
