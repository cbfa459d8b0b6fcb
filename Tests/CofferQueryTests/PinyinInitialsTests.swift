import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRecords
@testable import CofferSearch

/// `zh`, `ch` and `sh` typed as initials anywhere in a query (`zhs` → 张三), searched through the
/// tokenizer's marked retroflex terms, and a last syllable cut to two letters (`zhangsa`, `li`).
final class PinyinInitialsTests: XCTestCase {
    private static let names = [
        "张三", "曾三", "周山", "陈力", "岑力", "史林", "孙林", "程诗亮", "成思亮", "李丽", "李玲", "刘梁", "吕布",
    ]

    private func database(nicknames: [String: String] = [:]) throws -> Database {
        let database = try Database.inMemory()
        try database.write { db in
            _ = try db.upgradeSchema(for: [PinyinContact.self])
            for name in Self.names {
                var row = PinyinContact(id: nil, name: name, nickname: nicknames[name] ?? "")
                try row.insert(db)
            }
        }
        return database
    }

    private func found(_ input: String, in database: Database) throws -> Set<String> {
        try database.read { db in Set(try PinyinContact.matching(.pinyin(input)).fetchAll(db).map(\.name)) }
    }

    func testRetroflexInitialsFindOnlyTheirSyllables() throws {
        let database = try database()
        // zh, ch, sh narrow what z, c, s find: 曾 (zeng, ceng), 岑 (cen), 孙 (sun) and 思 (si) are left out.
        XCTAssertEqual(try found("zhs", in: database), ["张三", "周山"])
        XCTAssertEqual(try found("zs", in: database), ["张三", "曾三", "周山"])
        XCTAssertEqual(try found("chl", in: database), ["陈力"])
        XCTAssertEqual(try found("cl", in: database), ["陈力", "岑力"])
        // A phrase matches anywhere in the name: 程诗亮's 诗亮 is `sh l` too.
        XCTAssertEqual(try found("shl", in: database), ["史林", "程诗亮"])
        XCTAssertEqual(try found("sl", in: database), ["史林", "孙林", "程诗亮", "成思亮"])
        XCTAssertEqual(try found("zhsh", in: database), ["周山"])
        // Mixed with full syllables, characters and spaces, and both initials two-letter.
        XCTAssertEqual(try found("zhangs", in: database), ["张三"])
        XCTAssertEqual(try found("zh三", in: database), ["张三"])
        XCTAssertEqual(try found("zh s", in: database), ["张三", "周山"])
        XCTAssertEqual(try found("chshl", in: database), ["程诗亮"])
        XCTAssertEqual(try found("chsl", in: database), ["程诗亮", "成思亮"])  // s: shi and si
        XCTAssertEqual(try found("cshl", in: database), ["程诗亮"])
        XCTAssertEqual(try found("csl", in: database), ["程诗亮", "成思亮"])
    }

    func testARetroflexInitialBeforeAVowelIsTheWholeSyllable() {
        // `zh ang` would only repeat `zhang`: not a reading of its own.
        let readings = PinyinPiece.segmentations(of: Array("zhang".utf8), lastIsPrefix: true, limit: 6)
        XCTAssertFalse(readings.contains { $0.map(\.text) == ["zh", "ang"] }, "\(readings)")
        let initials = PinyinPiece.segmentations(of: Array("zhs".utf8), lastIsPrefix: true, limit: 6)
        XCTAssertEqual(initials.first?.map(\.text), ["zh", "s"])
    }

    func testTwoLetterPrefixesFindEverySyllableTheyStart() throws {
        let database = try database(nicknames: ["李丽": "Lily", "吕布": "Li", "孙林": "Shawn"])
        // `li` last: every syllable starting with li (li, lin, ling, liang, liu), and Latin words (吕布's
        // nickname), anywhere in the name.
        let withLi: Set = ["陈力", "岑力", "史林", "孙林", "程诗亮", "成思亮", "李丽", "李玲", "刘梁", "吕布"]
        XCTAssertEqual(try found("li", in: database), withLi)
        XCTAssertEqual(try found("lil", in: database), ["李丽", "李玲"])  // li + l, and Lily
        XCTAssertEqual(try found("lili", in: database), ["李丽", "李玲"])
        XCTAssertEqual(try found("liuli", in: database), ["刘梁"])
        XCTAssertEqual(try found("zhangsa", in: database), ["张三"])
        XCTAssertEqual(try found("chengsh", in: database), ["程诗亮"])
        // A whole syllable no longer syllable starts with stays exact; a cut one is a prefix.
        XCTAssertEqual(try found("lv", in: database), ["吕布"])
        XCTAssertEqual(try found("chengshiliang", in: database), ["程诗亮"])
        XCTAssertEqual(try found("chengshilia", in: database), ["程诗亮"])
        // `sh` last: every sh- syllable, as the one marked term, and a word starting with it (Shawn).
        XCTAssertEqual(try found("sh", in: database), ["周山", "史林", "程诗亮", "孙林"])
        XCTAssertEqual(try found("zh", in: database), ["张三", "周山"])
        // Only zh, ch and sh are marked terms; another two-letter prefix is FTS4's `sa*`.
        let cut = try FullTextPattern.pinyin("zhangsa").matchExpression()
        XCTAssertTrue(cut.contains("\u{1}zhang sa*\""), cut.debugDescription)
        XCTAssertFalse(cut.contains("\u{2}"), cut.debugDescription)
        let retroflex = try FullTextPattern.pinyin("zhangsh").matchExpression()
        XCTAssertTrue(retroflex.contains("\u{1}zhang \u{2}sh\""), retroflex.debugDescription)
    }

    func testMarksInUserTextAreSeparators() throws {
        let database = try database()
        // The user cannot type the marks: control characters separate, as everywhere.
        XCTAssertEqual(try found("\u{2}zh\u{2}s", in: database), ["张三", "周山"])
        XCTAssertEqual(try found("\u{1}\u{2}", in: database), [])
        XCTAssertEqual(try found("zh\u{2}", in: database), ["张三", "周山"])
    }
}
