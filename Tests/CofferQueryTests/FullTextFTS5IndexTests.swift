import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The chat table of FullTextFixtures with its index declared as FTS5.
@Table("chat5") struct ChatMessage5: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var sender: String
    var body: String
}

extension ChatMessage5: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<ChatMessage5>(columns.body, columns.sender, engine: .fts5)
}

/// FullTextFixtures' `chat` table, its index (same name, `chat_fts`) declared as FTS5: an app changing engines.
@Table("chat") struct ChatMessageOnFTS5: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var sender: String
    var body: String
}

extension ChatMessageOnFTS5: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<ChatMessageOnFTS5>(columns.body, columns.sender, engine: .fts5)
}

/// Contacts searched by pinyin, one table per engine.
@Table("contact4") struct PinyinContact4: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}

extension PinyinContact4: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<PinyinContact4>(columns.name, tokenizer: .pinyin)
}

@Table("contact5") struct PinyinContact5: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}

extension PinyinContact5: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<PinyinContact5>(columns.name, tokenizer: .pinyin, engine: .fts5)
}

/// Words indexed by SQLite's own `unicode61` in an FTS5 index, which another SQLite can read and check.
@Table("word") struct IndexedWord: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var text: String
}

extension IndexedWord: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<IndexedWord>(columns.text, tokenizer: .unicode61, engine: .fts5)
}

/// A ``FullTextIndex`` declared with ``FullTextEngine/fts5`` (where the linked SQLite has FTS5: SQLCipher 4)
/// against the same table indexed by FTS4, and against another SQLite's FTS5 (Python's `sqlite3`).
final class FullTextFTS5IndexTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var database: Database!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-fts5-index")
        database = try Database(path: directory.path("chat.db"), configuration: Configuration(encryption: .passphrase("f")))
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    private func requireFTS5() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.fts5), "SQLite \(LinkedSQLite.version) has no FTS5")
    }

    private static let words = [
        "新年", "晚会", "数据库", "加密", "北京", "烤鸭", "会议", "明天", "恢复", "天气", "東京", "서울",
        "party", "meeting", "draft", "database", "encrypted", "recovery", "weather", "tomorrow", "happy", "new",
        "year", "Café", "naïve", "SQLite", "3.49", "v2",
    ]

    /// The same `count` generated messages in `chat` (FTS4) and `chat5` (FTS5).
    private func fillBothTables(count: Int) throws {
        var generator = SeededGenerator(seed: 20_261_129)
        var messages: [ChatMessage] = []
        for index in 0..<count {
            let length = generator.int(in: 1...12)
            var body = ""
            for _ in 0..<length {
                let word = Self.words[generator.next(upTo: Self.words.count)]
                // CJK words run together half of the time, as Chinese is written.
                body +=
                    body.isEmpty || (generator.next(upTo: 2) == 0 && word.unicodeScalars.first!.value > 0x2E80)
                    ? word : " " + word
            }
            let sender = ["张三", "Ann", "李四", "Bob"][index % 4]
            messages.append(ChatMessage(id: nil, conversationID: Int64(index % 5), sender: sender, body: body))
        }
        try database.write { db in
            try db.upgradeSchema(for: [ChatMessage.self, ChatMessage5.self])
            for var message in messages {
                try message.insert(db)
                var copy = ChatMessage5(
                    id: nil, conversationID: message.conversationID, sender: message.sender, body: message.body)
                try copy.insert(db)
            }
        }
    }

    /// Patterns from every constructor, and search-box text a user may paste.
    private static let patterns: [FullTextPattern] = [
        .term("数据库"), .term("据库"), .term("库"), .phrase("新年晚会"), .prefix("data"), .prefix("数据"),
        .term("party") && .term("新年"), .term("party") || .term("晚会"), .term("北京").excluding(.term("烤鸭")),
        .near(["新年", "party"], distance: 3), (.term("happy") || .term("new")) && (.term("year") || .term("北京")),
        .term("cafe"), .term("NAIVE"), .term("3.49"), .term("張三"), .term("ann"),
        .searchBox("\"new year\" 晚会 -draft"), .searchBox("数据库 OR 北京 -烤鸭"), .searchBox("NEAR( a:b ^c )"),
        .searchBox("\"unbalanced 新年"), .searchBox("OR OR party OR"), .searchBox("data* -"), .searchBox("\u{0}新年\u{7}"),
        .searchBox("col:新年 AND NOT 晚会"), .searchBox(String(repeating: "新年 ", count: 40)),
        .searchBox(String(repeating: "库", count: 300)),
    ]

    func testAnFTS5IndexFindsTheRowsAndHighlightsAnFTS4IndexFinds() throws {
        try requireFTS5()
        try fillBothTables(count: 400)
        var nonEmpty = 0
        for pattern in Self.patterns {
            let (fts4, fts5) = try database.read { db in
                (
                    try ChatMessage.matching(pattern).fetchAll(db).map(\.id),
                    try ChatMessage5.matching(pattern).fetchAll(db).map(\.id)
                )
            }
            XCTAssertEqual(fts5, fts4, "\(pattern)")
            if !fts4.isEmpty { nonEmpty += 1 }
            // Ranked search: the same rows, each with the same highlighted ranges, best first.
            let (ranked4, ranked5) = try database.read { db in
                (try ChatMessage.search(pattern).fetchAll(db), try ChatMessage5.search(pattern).fetchAll(db))
            }
            let marks4 = Dictionary(uniqueKeysWithValues: ranked4.map { ($0.record.id, $0.highlights.map(Self.marked)) })
            let marks5 = Dictionary(uniqueKeysWithValues: ranked5.map { ($0.record.id, $0.highlights.map(Self.marked)) })
            XCTAssertEqual(marks5, marks4, "\(pattern)")
            XCTAssertEqual(ranked5.map(\.rank), ranked5.map(\.rank).sorted(by: >), "\(pattern)")
            XCTAssertTrue(ranked5.allSatisfy { $0.rank > 0 }, "\(pattern)")
        }
        XCTAssertGreaterThan(nonEmpty, Self.patterns.count / 2, "most patterns must find rows for the comparison to mean much")
    }

    private static func marked(_ highlight: FullTextHighlight) -> String {
        var text = ""
        var cursor = highlight.text.startIndex
        for range in highlight.ranges {
            text += highlight.text[cursor..<range.lowerBound] + "[" + highlight.text[range] + "]"
            cursor = range.upperBound
        }
        return highlight.column + ":" + text + highlight.text[cursor...]
    }

    func testTheTriggersAndInsertAllKeepAnFTS5IndexInStep() throws {
        try requireFTS5()
        try database.write { db in
            try db.upgradeSchema(for: [ChatMessage5.self])
            try ChatMessage5.insertAll(
                (0..<50).map { ChatMessage5(id: nil, conversationID: 1, sender: "Ann", body: "新年 message \($0)") }, db)
            var row = ChatMessage5(id: nil, conversationID: 2, sender: "Bob", body: "数据库 加密")
            try row.insert(db)
            _ = try ChatMessage5.filter { $0.id == 1 }.updateAll(db) { [$0.body.set(to: "晚会 party")] }
            try db.execute(sql: "UPDATE chat5 SET sender = 'Zoe' WHERE id = 2")
            try db.execute(sql: "DELETE FROM chat5 WHERE id = 3")
            _ = try ChatMessage5.filter { $0.id == 4 }.deleteAll(db)
        }
        let found = try database.read { db in
            (
                newYear: try ChatMessage5.matching(.term("新年")).fetchCount(db),
                party: try ChatMessage5.matching(.term("晚会")).fetchAll(db).map(\.id),
                zoe: try ChatMessage5.matching(.term("zoe")).fetchAll(db).map(\.id),
                ann: try ChatMessage5.matching(.term("ann")).fetchCount(db),
                database: try ChatMessage5.matching(.phrase("数据库 加密")).fetchAll(db).map(\.id)
            )
        }
        XCTAssertEqual(found.newYear, 47, "50 inserted, id 1 re-written, ids 3 and 4 deleted")
        XCTAssertEqual(found.party, [1])
        XCTAssertEqual(found.zoe, [2])
        XCTAssertEqual(found.ann, 47, "id 2 is Zoe's now")
        XCTAssertEqual(found.database, [51])
        try database.write { db in try ChatMessage5.fullTextIndex.checkIntegrity(db) }
        // The index really is FTS5, and FTS5's own check finds it agreeing with the content table.
        let sql = try database.read { db in
            try db.fetchValue(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'chat5_fts'")
        }
        XCTAssertEqual(
            sql, "CREATE VIRTUAL TABLE \"chat5_fts\" USING fts5(\"body\", \"sender\", content=\"chat5\", tokenize='coffer')")
        // A row whose index entry is missing (written with the triggers dropped) fails the check.
        try database.write { db in
            try db.execute(sql: "DROP TRIGGER chat5_fts_after_insert")
            try db.execute(sql: "INSERT INTO chat5(conversationID, sender, body) VALUES (3, 'Eve', 'unindexed')")
        }
        XCTAssertThrowsError(try database.write { db in try ChatMessage5.fullTextIndex.checkIntegrity(db) })
    }

    func testMergeStepsEmptyTheLevelsThatNeedMergeOnFTS5() throws {
        try requireFTS5()
        try database.write { db in
            try db.upgradeSchema(for: [ChatMessage5.self])
            // FTS5 merges by itself as it is written; with that off, every transaction leaves one more segment.
            try db.execute(sql: "INSERT INTO chat5_fts(chat5_fts, rank) VALUES ('automerge', 0)")
        }
        let index = ChatMessage5.fullTextIndex
        XCTAssertFalse(try database.read { db in try index.needsMerge(db, minimumSegments: 2) })
        for row in 0..<12 {
            try database.write { db in
                var row = ChatMessage5(id: nil, conversationID: 1, sender: "Ann", body: "segment \(row) 新年")
                try row.insert(db)
            }
        }
        XCTAssertTrue(try database.read { db in try index.needsMerge(db, minimumSegments: 8) })
        XCTAssertFalse(try database.read { db in try index.needsMerge(db, minimumSegments: 13) })
        var steps = 0
        while try database.write({ db in try index.merge(db, pages: 5, minimumSegments: 8) }) {
            steps += 1
            XCTAssertLessThan(steps, 100)
        }
        XCTAssertGreaterThan(steps, 0)
        XCTAssertFalse(try database.read { db in try index.needsMerge(db, minimumSegments: 8) })
        XCTAssertEqual(try database.read { db in try ChatMessage5.matching(.term("新年")).fetchCount(db) }, 12)
        try database.write { db in try index.checkIntegrity(db) }
        // The background merger drives the same steps.
        let merger = FullTextMerger(database: database, index: index, minimumSegments: 2, interval: 3_600)
        defer { merger.stop() }
        for row in 0..<3 {
            try database.write { db in
                var message = ChatMessage5(id: nil, conversationID: 1, sender: "Bob", body: "more \(row)")
                try message.insert(db)
            }
        }
        XCTAssertGreaterThan(try merger.mergeUntilDone(), 0)
        XCTAssertFalse(try database.read { db in try index.needsMerge(db, minimumSegments: 2) })
    }

    func testPinyinSearchThroughAnFTS5IndexMatchesFTS4() throws {
        try requireFTS5()
        let names = ["张三", "张山", "曾三", "吕布", "中国人", "資料庫", "单田芳", "李四", "长沙", "Zhang Wei", "zs-bot", "王小明"]
        try database.write { db in
            try db.upgradeSchema(for: [PinyinContact4.self, PinyinContact5.self])
            for name in names {
                var contact4 = PinyinContact4(id: nil, name: name)
                try contact4.insert(db)
                var contact5 = PinyinContact5(id: nil, name: name)
                try contact5.insert(db)
            }
        }
        let inputs = [
            "zhangsan", "zs", "zhang s", "张s", "zhangs", "zhs", "lv", "lü", "zgr", "中guo", "资料库", "shan", "dan",
            "chang", "zhang", "wxm", "zhang wei", "z", "", "!!", "曾", "zeng", "ceng",
        ]
        for input in inputs {
            let pattern = FullTextPattern.pinyin(input)
            let (ids4, ids5, marks4, marks5) = try database.read { db in
                (
                    try PinyinContact4.matching(pattern).fetchAll(db).map(\.id),
                    try PinyinContact5.matching(pattern).fetchAll(db).map(\.id),
                    try PinyinContact4.search(pattern).fetchAll(db).map { $0.highlights.map(Self.marked) }.sorted {
                        "\($0)" < "\($1)"
                    },
                    try PinyinContact5.search(pattern).fetchAll(db).map { $0.highlights.map(Self.marked) }.sorted {
                        "\($0)" < "\($1)"
                    }
                )
            }
            XCTAssertEqual(ids5, ids4, input)
            XCTAssertEqual(marks5, marks4, input)
        }
        let zhangsan = try database.read { db in try PinyinContact5.search(.pinyin("zhangs")).fetchAll(db) }
        // zhang + a syllable starting with s: 张三 (san), 张山 (shan), 长沙 (长 is also zhǎng; sha).
        XCTAssertEqual(Set(zhangsan.map(\.record.name)), ["张三", "张山", "长沙"])
        for result in zhangsan {
            XCTAssertEqual(result.highlights.map(Self.marked), ["name:[\(result.record.name)]"])
        }
    }

    func testChangingTheEngineRebuildsTheIndexAsFTS5() throws {
        try requireFTS5()
        try database.write { db in
            try db.upgradeSchema(for: [ChatMessage.self])
            for body in ["新年晚会", "数据库", "happy new year"] {
                var row = ChatMessage(id: nil, conversationID: 1, sender: "Ann", body: body)
                try row.insert(db)
            }
        }
        let report = try database.write { db in try db.upgradeSchema(for: [ChatMessageOnFTS5.self]) }
        XCTAssertEqual(report.createdFullTextIndexes, ["chat_fts"])
        let (module, found, again) = try database.write { db in
            (
                try db.fetchValue(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'chat_fts'") ?? "",
                try ChatMessageOnFTS5.matching(.term("晚会") || .term("year")).fetchAll(db).map(\.body),
                try db.upgradeSchema(for: [ChatMessageOnFTS5.self]).createdFullTextIndexes
            )
        }
        XCTAssertTrue(module.contains("USING fts5("), module)
        XCTAssertEqual(found, ["新年晚会", "happy new year"])
        XCTAssertEqual(again, [], "an index already declared so is left alone")
    }

    /// Python's `sqlite3` (another SQLite, with its own FTS5 and `unicode61`) indexes the same words; Coffer's
    /// FTS5 index over them finds the same rows, and that SQLite reads and checks the index Coffer wrote.
    func testAnotherSQLiteReadsTheFTS5IndexAndFindsTheSameRows() throws {
        try requireFTS5()
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: FileManager.default.isExecutableFile)
        else { throw XCTSkip("no python3") }
        let path = directory.path("words.db")
        let terms = ["alpha", "beta", "gamma", "delta", "café", "naïve", "straße", "ελληνικά", "東京", "x1", "über"]
        let producer = """
            import sqlite3, sys, random
            terms = sys.argv[2].split(",")
            random.seed(7)
            db = sqlite3.connect(sys.argv[1])
            db.execute("CREATE TABLE word(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            rows = [(i, " ".join(random.choice(terms).upper() if random.random() < 0.2 else random.choice(terms)
                                 for _ in range(random.randint(1, 6)))) for i in range(1, 301)]
            db.executemany("INSERT INTO word VALUES (?, ?)", rows)
            db.commit()
            """
        let made = try Shell.run(python, ["-c", producer, path, terms.joined(separator: ",")])
        XCTAssertEqual(made.status, 0, made.stderr)
        let plain = try Database(path: path, configuration: Configuration())
        try plain.write { db in _ = try db.upgradeSchema(for: [IndexedWord.self]) }
        let coffer = try terms.map { term in
            try plain.read { db in try IndexedWord.matching(.term(term)).fetchAll(db).compactMap(\.id) }
        }
        let prefixes = try ["al", "ga", "caf", "東"].map { prefix in
            try plain.read { db in try IndexedWord.matching(.prefix(prefix)).fetchAll(db).compactMap(\.id) }
        }
        try plain.close()
        let reader = """
            import sqlite3, sys, json
            db = sqlite3.connect(sys.argv[1])
            db.execute("INSERT INTO word_fts(word_fts) VALUES ('integrity-check')")
            db.execute("CREATE VIRTUAL TABLE reference USING fts5(text, tokenize='unicode61')")
            db.execute("INSERT INTO reference(rowid, text) SELECT id, text FROM word")
            def ids(table, match):
                return [r[0] for r in db.execute("SELECT rowid FROM %s WHERE %s MATCH ? ORDER BY rowid" % (table, table), (match,))]
            out = {"index": [], "reference": [], "prefix": []}
            for term in sys.argv[2].split(","):
                out["index"].append(ids("word_fts", '"%s"' % term))
                out["reference"].append(ids("reference", '"%s"' % term))
            for prefix in ["al", "ga", "caf", "東"]:
                out["prefix"].append(ids("reference", '"%s" *' % prefix))
            print(json.dumps(out))
            """
        let read = try Shell.run(python, ["-c", reader, path, terms.joined(separator: ",")])
        XCTAssertEqual(read.status, 0, read.stderr)
        let output = try JSONDecoder().decode([String: [[Int64]]].self, from: Data(read.stdout.utf8))
        XCTAssertEqual(coffer, output["reference"], "Coffer's FTS5 index finds what another SQLite's FTS5 finds")
        XCTAssertEqual(output["index"], output["reference"], "another SQLite reads Coffer's index as its own")
        XCTAssertEqual(prefixes, output["prefix"])
        XCTAssertGreaterThan(coffer.filter { !$0.isEmpty }.count, 8)
    }

    func testAnFTS5IndexIsATypedErrorOnALibraryWithoutFTS5() throws {
        try XCTSkipIf(LinkedSQLite.supports(.fts5), "SQLite \(LinkedSQLite.version) has FTS5")
        XCTAssertThrowsError(try database.write { db in try db.upgradeSchema(for: [ChatMessage5.self]) }) { error in
            XCTAssertEqual((error as? CofferError)?.code, .unsupportedByLibrary, "\(error)")
            XCTAssertTrue("\(error)".contains("FTS5"), "\(error)")
        }
        let tables = try database.read { db in
            try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE name LIKE 'chat5%'").map {
                try $0.decode(String.self, at: 0)
            }
        }
        XCTAssertEqual(tables, [], "the upgrade rolled back: no table without its index")
        // An FTS4 index on the same library still works.
        try database.write { db in
            try db.upgradeSchema(for: [ChatMessage.self])
            var row = ChatMessage(id: nil, conversationID: 1, sender: "Ann", body: "新年晚会")
            try row.insert(db)
        }
        XCTAssertEqual(try database.read { db in try ChatMessage.matching(.term("晚会")).fetchCount(db) }, 1)
    }
}
