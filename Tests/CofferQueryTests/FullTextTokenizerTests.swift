import Coffer
import CofferTestSupport
import XCTest

/// The `coffer` tokenizer, through FTS4 tables on real connections: the terms it indexes, what CJK,
/// case and diacritics queries find, and that fts3_tokenizer()'s pointer form stays out of SQL's reach.
final class FullTextTokenizerTests: XCTestCase {
    private func terms(of text: String, on database: Database) throws -> [String] {
        try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS t USING fts4(x, tokenize=coffer)")
            try db.execute(sql: "DELETE FROM t")
            try db.execute(sql: "INSERT INTO t(x) VALUES (?)", arguments: [text])
        }
        // Read after the commit: FTS keeps a transaction's terms in memory until then.
        return try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE IF NOT EXISTS t_terms USING fts4aux(t)")
            return try db.fetchAll(sql: "SELECT term FROM t_terms WHERE col = '*' ORDER BY term").compactMap { $0["term"] }
        }
    }

    func testCJKRunsArePairsEndingWithTheLastCharacterAndOtherTextIsUnicode61Words() throws {
        let database = try Database.inMemory()
        XCTAssertEqual(
            try terms(of: "你好世界 Hello Wörld", on: database).sorted(),
            ["hello", "world", "世界", "你好", "好世", "界"].sorted())
        XCTAssertEqual(
            try terms(of: "東京タワー😀서울역a", on: database).sorted(),
            ["a", "京タ", "タワ", "ワー", "ー", "東京", "서울", "울역", "역"].sorted())
        XCTAssertEqual(try terms(of: "", on: database), [])
        XCTAssertEqual(try terms(of: "字", on: database), ["字"])
    }

    func testEveryCJKSubstringAndEveryCharacterIsFound() throws {
        let database = try Database.inMemory()
        let text = "我们明天在北京见面吧，好吗？"
        try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts4(x, tokenize=coffer)")
            try db.execute(sql: "INSERT INTO t(x) VALUES (?), ('无关的内容')", arguments: [text])
        }
        let run = Array("我们明天在北京见面吧")
        for start in run.indices {
            for end in start..<run.count {
                let query = String(run[start...end])
                let expression = try FullTextPattern.term(query).matchExpression()
                let found = try database.read { db in
                    try db.fetchValue(Int.self, sql: "SELECT count(*) FROM t WHERE t MATCH ?", arguments: [expression])
                }
                XCTAssertEqual(found, 1, "\(query) (\(expression))")
            }
        }
        let missing = try database.read { db in
            try db.fetchValue(
                Int.self, sql: "SELECT count(*) FROM t WHERE t MATCH ?",
                arguments: [try FullTextPattern.term("北见").matchExpression()])
        }
        XCTAssertEqual(missing, 0)
    }

    func testCaseAndDiacriticsFoldAsUnicode61Does() throws {
        let database = try Database.inMemory()
        try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts4(x, tokenize=coffer)")
            try db.execute(sql: "INSERT INTO t(x) VALUES ('Crème BRÛLÉE à Paris')")
        }
        for query in ["creme", "brulee", "PARIS", "crème brûlée"] {
            let found = try database.read { db in
                try db.fetchValue(
                    Int.self, sql: "SELECT count(*) FROM t WHERE t MATCH ?",
                    arguments: [try FullTextPattern.phrase(query).matchExpression()])
            }
            XCTAssertEqual(found, 1, query)
        }
    }

    func testSQLCannotCallTheTwoArgumentFormOfFTS3Tokenizer() throws {
        let database = try Database.inMemory()
        XCTAssertThrowsError(
            try database.write { try $0.execute(sql: "SELECT fts3_tokenizer('evil', fts3_tokenizer('simple'))") }
        ) { error in
            XCTAssertTrue("\(error)".contains("fts3tokenize disabled"), "\(error)")
        }
        // The one-argument form (a lookup) still works, and Coffer's tokenizer is registered.
        XCTAssertNoThrow(try database.read { try $0.execute(sql: "SELECT fts3_tokenizer('coffer')") })
    }

    func testAFileWhoseSchemaCallsFTS3TokenizerCannotInstallAPointer() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("hostile.db")
        // Written by the sqlcipher shell: a view and a trigger that would replace Coffer's tokenizer with
        // `simple`'s module pointer (any pointer would do for an attacker).
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE note(x);
            CREATE VIEW hijack AS SELECT fts3_tokenizer('coffer', fts3_tokenizer('simple')) AS p;
            CREATE TRIGGER hijack_insert AFTER INSERT ON note BEGIN
              SELECT fts3_tokenizer('coffer', fts3_tokenizer('simple'));
            END;
            """)
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertThrowsError(try database.read { try $0.fetchAll(sql: "SELECT * FROM hijack") })
        XCTAssertThrowsError(try database.write { try $0.execute(sql: "INSERT INTO note VALUES (1)") })
        // `coffer` still splits CJK into pairs (the simple tokenizer would keep 你好世界 whole).
        try database.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts4(x, tokenize=coffer)")
            try db.execute(sql: "INSERT INTO t(x) VALUES ('你好世界')")
        }
        let found = try database.read { db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM t WHERE t MATCH '世界'")
        }
        XCTAssertEqual(found, 1)
    }
}
