import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A contact with a pinyin index over its name and nickname.
@Table("pinyin_contact") struct PinyinContact: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
    var nickname: String
}

extension PinyinContact: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<PinyinContact>(columns.name, columns.nickname, tokenizer: .pinyin)
}

/// An account with an identifier index over its phone number and e-mail address.
@Table("pinyin_account") struct IdentifierAccount: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var phone: String
    var email: String
}

extension IdentifierAccount: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<IdentifierAccount>(columns.phone, columns.email, tokenizer: .identifier)
}

/// The `coffer_pinyin` and `coffer_identifier` tokenizers and `FullTextPattern.pinyin`, on real FTS4 tables.
final class PinyinSearchTests: XCTestCase {
    private static let names = [
        "张三", "吕布", "中国人", "资料库", "資料庫", "单", "曾", "长", "重", "行", "我是张三的朋友", "李四", "张伟",
        "西安", "先", "Tom", "张三丰",
    ]

    private func database(names: [String] = PinyinSearchTests.names) throws -> (Database, [String: Int64]) {
        let database = try Database.inMemory()
        var ids: [String: Int64] = [:]
        try database.write { db in
            _ = try db.upgradeSchema(for: [PinyinContact.self, IdentifierAccount.self])
            for name in names {
                var row = PinyinContact(id: nil, name: name, nickname: name == "Tom" ? "汤姆" : "")
                try row.insert(db)
                ids[name] = try XCTUnwrap(row.id)
            }
        }
        return (database, ids)
    }

    private func found(_ input: String, in database: Database) throws -> Set<String> {
        try database.read { db in Set(try PinyinContact.matching(.pinyin(input)).fetchAll(db).map(\.name)) }
    }

    func testZhangSanIsFoundByEveryKindOfQuery() throws {
        let (database, _) = try database()
        let queries = [
            "张三", "張三", "zhangsan", "zhang san", "zhang-san", "zs", "z s", "zhangs", "zhangsa", "zhang s", "张s",
            "张san", "zhang三", "z三", "zsan", "ZhangSan", "zhāngsān", "  zhang   san  ", "zh",
        ]
        for query in queries {
            XCTAssertTrue(try found(query, in: database).contains("张三"), query)
        }
        XCTAssertEqual(try found("zsf", in: database), ["张三丰"])
        XCTAssertEqual(try found("zhangsanf", in: database), ["张三丰"])
        XCTAssertFalse(try found("zhangsi", in: database).contains("张三"))
        XCTAssertFalse(try found("sz", in: database).contains("张三"))
    }

    /// A key-value store's full-text field takes the pinyin tokenizer too: a contact cached as JSON by id
    /// is found by its initials, and a plain `.searchBox` store beside it keeps the default tokenizer.
    func testKeyValueStoreSearchesByPinyin() throws {
        struct Card: Codable, Sendable {
            var name: String
            static let name = KeyValueIndexField<Card, String>("name") { $0.name }
        }
        let database = try Database.inMemory()
        let cards = try KeyValueStore(database: database, name: "cards", configuration: .init(indexes: [Card.name]))
        try cards.enableFullTextSearch(on: Card.name, tokenizer: .pinyin)
        try cards.put(Card(name: "张三"), for: "u1")
        try cards.put(Card(name: "李四"), for: "u2")
        for typed in ["zs", "zhangs", "张s", "張三"] {
            XCTAssertEqual(try cards.search(Card.self, matching: .pinyin(typed)).map(\.key), ["u1"], typed)
        }
        XCTAssertEqual(try cards.search(Card.self, matching: .pinyin("ls")).map(\.key), ["u2"])
        let sql = try database.read { db in
            try db.fetchValue(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'kv-fts:cards'")
        }
        XCTAssertTrue(sql?.contains("tokenize=coffer_pinyin") ?? false, sql ?? "no index")
    }

    func testLvAndLüFindLü() throws {
        let (database, _) = try database()
        for query in ["lv", "lü", "lǚ", "lu\u{308}", "lvbu", "lb", "吕", "lü bu", "LV"] {
            XCTAssertTrue(try found(query, in: database).contains("吕布"), query)
        }
    }

    func testInitialsAndMixedFindChinaPerson() throws {
        let (database, _) = try database()
        for query in ["zgr", "中guo", "中guoren", "zhongguoren", "zhong guo r", "中国r", "zg人", "zhonggr"] {
            XCTAssertTrue(try found(query, in: database).contains("中国人"), query)
        }
    }

    func testPolyphonicCharactersAreFoundByEveryReading() throws {
        let (database, _) = try database()
        let readings = [
            "单": ["dan", "shan", "chan"], "曾": ["zeng", "ceng"], "长": ["chang", "zhang"], "重": ["zhong", "chong"],
            "行": ["xing", "hang"],
        ]
        for (character, syllables) in readings {
            for syllable in syllables {
                XCTAssertTrue(try found(syllable, in: database).contains(character), "\(character) by \(syllable)")
            }
        }
    }

    func testTraditionalAndSimplifiedFindEachOther() throws {
        let (database, _) = try database()
        for query in ["資料庫", "资料库", "ziliaoku", "资料庫", "zlk"] {
            XCTAssertEqual(try found(query, in: database), ["资料库", "資料庫"], query)
        }
        // Without folding, each form finds only itself (by characters), but pinyin finds both.
        let unfolded = try Database.inMemory()
        try unfolded.write { db in
            try db.execute(sql: "CREATE VIRTUAL TABLE t USING fts4(name, tokenize=coffer_pinyin \"fold=0\")")
            try db.execute(sql: "INSERT INTO t(name) VALUES ('资料库'), ('資料庫')")
            let byCharacters = try db.fetchAll(
                sql: "SELECT name FROM t WHERE t MATCH ?", arguments: [try FullTextPattern.pinyin("資料庫").matchExpression()])
            XCTAssertEqual(byCharacters.count, 1)
            let byPinyin = try db.fetchAll(
                sql: "SELECT name FROM t WHERE t MATCH ?", arguments: [try FullTextPattern.pinyin("ziliaoku").matchExpression()])
            XCTAssertEqual(byPinyin.count, 2)
        }
    }

    func testHighlightsCoverTheMatchedCharacters() throws {
        let (database, _) = try database()
        for query in ["zs", "zhangsan", "张s", "zhangs"] {
            let results = try database.read { db in try PinyinContact.search(.pinyin(query)).fetchAll(db) }
            let friend = try XCTUnwrap(results.first { $0.record.name == "我是张三的朋友" }, query)
            let highlight = try XCTUnwrap(friend.highlights.first)
            XCTAssertEqual(highlight.ranges.map { String(highlight.text[$0]) }, ["张三"], query)
            XCTAssertEqual(friend.snippet()?.marked(), "我是[张三]的朋友", query)
        }
        let tom = try database.read { db in try PinyinContact.search(.pinyin("tangm")).fetchAll(db) }
        XCTAssertEqual(tom.first?.snippet()?.marked(), "[汤姆]")
    }

    func testIdentifiersAreFoundByAnyRunOfThreeCharacters() throws {
        let (database, _) = try database()
        try database.write { db in
            var first = IdentifierAccount(id: nil, phone: "+86 138 0013 8000", email: "john.doe@Example.com")
            try first.insert(db)
            var second = IdentifierAccount(id: nil, phone: "(021) 6234-5678", email: "ORDER-2024-00017@shop.cn")
            try second.insert(db)
        }
        func phones(_ pattern: FullTextPattern) throws -> [String] {
            try database.read { db in try IdentifierAccount.matching(pattern).fetchAll(db).map(\.phone) }
        }
        XCTAssertEqual(try phones(.searchBox("1380013")), ["+86 138 0013 8000"])
        XCTAssertEqual(try phones(.searchBox("138-0013-8000")), ["+86 138 0013 8000"])
        XCTAssertEqual(try phones(.searchBox("doe@exa")), ["+86 138 0013 8000"])
        XCTAssertEqual(try phones(.searchBox("EXAMPLE")), ["+86 138 0013 8000"])
        XCTAssertEqual(try phones(.searchBox("62345678")), ["(021) 6234-5678"])
        XCTAssertEqual(try phones(.searchBox("order202400017")), ["(021) 6234-5678"])
        XCTAssertEqual(try phones(.searchBox("0017")), ["(021) 6234-5678"])
        XCTAssertEqual(try phones(.searchBox("13800139")), [])
        XCTAssertEqual(try phones(.searchBox("86*")), ["+86 138 0013 8000"])
        let results = try database.read { db in try IdentifierAccount.search(.searchBox("1380013")).fetchAll(db) }
        let highlight = try XCTUnwrap(results.first?.highlights.first)
        XCTAssertEqual(highlight.ranges.map { String(highlight.text[$0]) }, ["138 0013"])
    }

    func testHostileInputFindsRowsOrNothingAndNeverThrows() throws {
        let (database, _) = try database()
        var random = SeededGenerator(seed: 0x91_4E)
        let alphabet = Array("zhangsanlvü张三資料庫 \0\u{1}\u{7F}\"*()-:^NEAR OR，。！😀\u{308}\u{301}")
        var inputs = [
            "", " ", "\0", "\u{1}", "\u{1}zhang", "\"", "*", "，。！？", "()", "NEAR/2", "-zs", "zs*", "OR", "😀",
            String(repeating: "zhangsan", count: 12_800), String(repeating: "张三", count: 20_000),
            String(repeating: "中guo ", count: 20_000), String(repeating: "a", count: 100_000),
            String(repeating: "i", count: 300), String(repeating: "\u{301}", count: 10_000),
        ]
        for _ in 0..<300 {
            inputs.append(String((0..<(1 + random.next(upTo: 40))).map { _ in alphabet[random.next(upTo: alphabet.count)] }))
        }
        for input in inputs {
            let pattern = FullTextPattern.pinyin(input)
            let expression = pattern.matchesNothing ? nil : try pattern.matchExpression()
            XCTAssertLessThan(expression?.utf8.count ?? 0, 4_000, input.prefix(40).debugDescription)
            XCTAssertNoThrow(
                try database.read { db in _ = try PinyinContact.search(pattern).fetchAll(db) }, input.prefix(40).debugDescription)
        }
        XCTAssertTrue(FullTextPattern.pinyin("，。！").matchesNothing)
        XCTAssertTrue(FullTextPattern.pinyin("").matchesNothing)
        XCTAssertTrue(try found(String(repeating: "zhangsan", count: 12_800), in: database).isEmpty)
        XCTAssertTrue(try found("张三" + String(repeating: "，", count: 100_000), in: database).contains("张三"))
    }

    /// The committed table is the generator's output for the installed Unihan files (skipped without them).
    func testCommittedTableIsTheGeneratorsOutput() throws {
        let unihan = "/usr/share/unicode/Unihan_Readings.txt.bz2"
        try XCTSkipUnless(FileManager.default.fileExists(atPath: unihan), "Debian's unicode-data is not installed")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = try TemporaryDirectory()
        let output = directory.path("pinyin_table.h")
        let script = root.appendingPathComponent("Tools/pinyin/generate-pinyin-table.py").path
        let result = try Shell.run("/usr/bin/env", ["python3", script, "--output", output])
        XCTAssertEqual(result.status, 0, result.stderr)
        let generated = try String(contentsOfFile: output, encoding: .utf8)
        let committed = try String(
            contentsOf: root.appendingPathComponent("Sources/CofferTokenizer/pinyin_table.h"), encoding: .utf8)
        XCTAssertTrue(generated.hasPrefix("// Generated by Tools/pinyin/generate-pinyin-table.py from Unihan (Unicode "))
        XCTAssertTrue(generated == committed, "the committed table differs from the generator's output: regenerate it")
    }
}
