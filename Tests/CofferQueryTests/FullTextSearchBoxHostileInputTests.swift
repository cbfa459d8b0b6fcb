import Coffer
import CofferTestSupport
import XCTest

/// Search-box input as users paste it — NUL and other control characters, thousands of words, a
/// megabyte, operators or punctuation alone, unbalanced quotes — on a real FTS4 table of Chinese and
/// English rows: it finds rows or none, never an error, and what it finds for words of the rows equals a
/// brute-force scan of them for the words it keeps (the first `FullTextPattern.searchBoxMaximumTerms`).
final class FullTextSearchBoxHostileInputTests: XCTestCase {
    private static let english = ["happy", "new", "year", "backup", "report", "data", "stock", "meeting", "lunch", "zoom"]
    private static let chinese = Array("数据库备份完成今天很多新年快乐你好世界会议午饭")
    private static let emoji = ["😀", "👍🏽", "🇨🇳", "👨‍👩‍👧", "❤️"]
    private static let senders = ["ana", "bob", "李雷", "韩梅梅"]
    /// Rows the named cases below look for; the seeded rows follow them.
    private static let fixedRows: [(sender: String, body: String)] = [
        ("ana", "数据库 备份 完成 backup done"),
        ("bob", "数据 和 库存 data and stock"),
        ("李雷", "今天的数据很多， report ready"),
        ("ana", "库 is empty"),
        ("mum", "新年快乐 happy new year 😀"),
        ("bob", String(repeating: "abcdefghij", count: 30) + " long word"),
        ("ana", String(repeating: "甲乙丙丁戊己庚辛壬癸", count: 30)),
        ("bob", "导出 数据：库 backup ok"),
    ]
    /// Control characters and whitespace between words of the reference inputs.
    private static let separators = [
        " ", "\0", "\t", "\n", "\r\n", "\u{1}", "\u{1F}", "\u{7F}", "\u{85}", "\u{9F}", "\u{3000}", " \0 ",
    ]

    private var database: Database!
    /// Each row's sender and body by id: what the reference scans.
    private var rows: [Int64: [String]] = [:]

    override func setUpWithError() throws {
        database = try Database.inMemory()
        var random = SeededGenerator(seed: 0x38_5EA8C4)
        var corpus = Self.fixedRows
        for _ in 0..<150 { corpus.append((Self.senders[random.next(upTo: Self.senders.count)], Self.body(&random))) }
        var rows: [Int64: [String]] = [:]
        try database.write { db in
            _ = try db.upgradeSchema(for: [ChatMessage.self])
            for (sender, body) in corpus {
                var message = ChatMessage(id: nil, conversationID: 1, sender: sender, body: body)
                try message.insert(db)
                rows[try XCTUnwrap(message.id)] = [sender, body]
            }
        }
        self.rows = rows
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
    }

    /// A chat message of English words, runs of 1–6 Chinese characters, emoji and punctuation.
    private static func body(_ random: inout SeededGenerator) -> String {
        var text = english[random.next(upTo: english.count)]
        for _ in 0..<(2 + random.next(upTo: 8)) {
            switch random.next(upTo: 10) {
            case 0..<4: text += " " + english[random.next(upTo: english.count)]
            case 4..<8: text += " " + String((0...random.next(upTo: 6)).map { _ in chinese[random.next(upTo: chinese.count)] })
            case 8: text += emoji[random.next(upTo: emoji.count)]
            default: text += random.next(upTo: 2) == 0 ? "，" : "! "
            }
        }
        return text
    }

    // MARK: - Helpers

    private func ids(_ pattern: FullTextPattern) throws -> Set<Int64> {
        try database.read { db in Set(try ChatMessage.matching(pattern).fetchAll(db).compactMap(\.id)) }
    }

    /// Runs `input` through both query paths (the driven query and the ranked search) and returns the rows
    /// found, failing the test if either throws or if they differ.
    private func searchBox(_ input: String, file: StaticString = #filePath, line: UInt = #line) -> Set<Int64> {
        let pattern = FullTextPattern.searchBox(input)
        do {
            let matched = try ids(pattern)
            let ranked = try database.read { db in try ChatMessage.search(pattern).fetchAll(db) }
            XCTAssertEqual(
                Set(ranked.compactMap(\.record.id)), matched, "input \(input.prefix(80).debugDescription)", file: file, line: line
            )
            return matched
        } catch {
            XCTFail("input \(input.prefix(80).debugDescription) threw \(error)", file: file, line: line)
            return []
        }
    }

    /// The ids of rows where every word occurs in the sender or the body as the tokenizer finds it: a CJK
    /// word as a substring (`FullTextRecallTests`), any other as a whole token, case folded.
    private func reference(_ words: [String]) -> Set<Int64> {
        Set(rows.filter { _, texts in words.allSatisfy { word in texts.contains { Self.holds($0, word) } } }.keys)
    }

    private static func holds(_ text: String, _ word: String) -> Bool {
        if word.unicodeScalars.allSatisfy({ $0.value >= 0x3400 }) { return text.contains(word) }
        return tokens(text).contains(word.lowercased())
    }

    private static func tokens(_ text: String) -> Set<String> {
        Set(text.split { !($0.isASCII && ($0.isLetter || $0.isNumber)) }.map { $0.lowercased() })
    }

    // MARK: - The inputs that threw

    func testNULInsideCJKSeparatesWordsLikeASpace() {
        let spaced = searchBox("数据 库")
        XCTAssertEqual(spaced, reference(["数据", "库"]))
        XCTAssertTrue(spaced.isSuperset(of: [1, 2, 8]), "数据库, 数据 … 库存 and 数据：库 hold both")
        XCTAssertEqual(searchBox("数据\0库"), spaced)
        for control in ["\u{1}", "\u{8}", "\u{1B}", "\u{7F}", "\u{80}", "\u{9F}", "\0\0\0"] {
            XCTAssertEqual(searchBox("数据\(control)库"), spaced, "control \(control.debugDescription)")
        }
        XCTAssertEqual(searchBox("\"数据\0库\""), searchBox("\"数据 库\""), "a NUL in a phrase is a space in it")
        XCTAssertEqual(searchBox("backup\0done"), [1])
        XCTAssertEqual(searchBox("-\0数据"), reference(["数据"]), "a dash before a control character negates nothing")
        XCTAssertEqual(searchBox("数据 -\u{1}库"), spaced)
        XCTAssertEqual(searchBox("数据 -库\0"), reference(["数据"]).subtracting(reference(["库"])))
    }

    func testTermPhrasePrefixAndNearWithNULDoNotThrow() throws {
        XCTAssertEqual(try FullTextPattern.term("数据\0库").matchExpression(), "\"数据 库*\"")
        XCTAssertEqual(try ids(.term("数据\0库")), try ids(.phrase("数据 库")))
        XCTAssertTrue(try ids(.term("数据\0库")).contains(8), "数据：库: the words next to each other")
        XCTAssertFalse(try ids(.term("数据\0库")).contains(1), "数据库 is one word, not the phrase 数据 库")
        XCTAssertEqual(try ids(.phrase("happy\0new\u{1}year")), try ids(.phrase("happy new year")))
        XCTAssertTrue(try ids(.phrase("happy\0new\u{1}year")).contains(5))
        XCTAssertEqual(try ids(.prefix("back\0")), try ids(.prefix("back")))
        XCTAssertEqual(try ids(.prefix("back\0")), reference(["backup"]))
        XCTAssertEqual(try ids(.near(["数据\0库", "backup\0"], distance: 5)), [8])
        XCTAssertEqual(try ids(.term("\0")), [])
        XCTAssertTrue(FullTextPattern.phrase("\0\u{1}\u{7F}").matchesNothing)
        for control in (0..<0x20).map({ Unicode.Scalar(UInt8($0)) }) + ["\u{7F}", "\u{9F}"] {
            let expression = try FullTextPattern.phrase("a\(control)b").matchExpression()
            XCTAssertFalse(expression.unicodeScalars.contains { $0.properties.generalCategory == .control })
        }
    }

    func testAPastedTextOf5000WordsKeepsItsFirstWords() {
        // The reported input: 10 kB of 5,000 one-letter words.
        let letters = (0..<5000).map { String(UnicodeScalar(UInt8(0x61 + $0 % 26))) }
        let paste = letters.joined(separator: " ")
        XCTAssertEqual(paste.utf8.count, 9_999)
        XCTAssertEqual(searchBox(paste), reference(Array(letters.prefix(FullTextPattern.searchBoxMaximumTerms))))
        // 5,000 words that one row holds.
        let words = (0..<5000).map { ["happy", "new", "year"][$0 % 3] }
        let happyNewYear = reference(["happy", "new", "year"])
        XCTAssertTrue(happyNewYear.contains(5))
        XCTAssertEqual(searchBox(words.joined(separator: " ")), happyNewYear)
        let afterTheCap = Array(words.prefix(FullTextPattern.searchBoxMaximumTerms)) + ["zzyzx"] + words
        XCTAssertEqual(searchBox(afterTheCap.joined(separator: " ")), happyNewYear, "words after the first 32 are not read")
        XCTAssertEqual(searchBox((["zzyzx"] + words).joined(separator: " ")), [], "the first 32 all count")
        XCTAssertEqual(searchBox((["-happy"] + words).joined(separator: "\0")), [], "a -word counts and excludes")
    }

    func testTenThousandWordsWithOperatorsAndExclusions() {
        let words = (0..<10_000).map { Self.english[$0 % Self.english.count] }
        let anyWord = Set(Self.english.flatMap { reference([$0]) })
        XCTAssertEqual(searchBox(words.joined(separator: " ")), reference(Self.english))
        XCTAssertEqual(searchBox(words.joined(separator: " OR ")), anyWord, "one OR group of the first 32 words")
        XCTAssertEqual(searchBox("数据 " + words.map { "-" + $0 }.joined(separator: " ")), reference(["数据"]).subtracting(anyWord))
        XCTAssertEqual(searchBox(words.map { "\"\($0) " }.joined()), reference(Self.english), "10,000 quotes")
        XCTAssertEqual(searchBox(words.map { $0 + "*" }.joined(separator: "\0")), reference(Self.english))
        // The deepest tree 32 terms make: 16 words joined by OR, AND-ed with 16 more (10 levels of 12).
        let ors = (0..<16).map { Self.english[$0 % Self.english.count] }.joined(separator: " OR ")
        let ands = (0..<16).map { _ in "数据" }.joined(separator: " ")
        XCTAssertEqual(searchBox(ors + " " + ands), reference(["数据"]).intersection(anyWord))
    }

    func testAPastedMegabyte() {
        let megabyte = 1 << 20
        let words = String(repeating: "happy new year ", count: megabyte / 15)
        XCTAssertEqual(searchBox(words), reference(["happy", "new", "year"]))
        XCTAssertEqual(searchBox("\"" + words), [], "one phrase of its first 256 scalars, which no row holds")
        let quoted = "\"" + Self.fixedRows[5].body + String(repeating: " tail", count: megabyte / 5)
        XCTAssertEqual(searchBox(quoted), [6], "a phrase cut inside the row's long word, searched as its prefix")
        let han = String(repeating: "甲乙丙丁戊己庚辛壬癸", count: megabyte / 30)
        XCTAssertEqual(searchBox(han), [7], "a megabyte of Chinese without a space is cut to a prefix")
        XCTAssertEqual(searchBox(String(repeating: "abcdefghij", count: megabyte / 10)), [6])
        XCTAssertEqual(searchBox(String(repeating: "\0", count: megabyte)), [])
        XCTAssertEqual(searchBox(String(repeating: "!", count: megabyte)), [])
        XCTAssertEqual(searchBox(String(repeating: "\"(* -^:", count: megabyte / 8)), [])
        let zalgo = "a" + String(repeating: "\u{301}", count: megabyte / 2)
        XCTAssertEqual(zalgo.count, 1, "one Character")
        XCTAssertNoThrow(try FullTextPattern.searchBox(zalgo).matchExpression())
        _ = searchBox(zalgo)
    }

    func testAWordLongerThanTheLimitIsSearchedAsAPrefix() throws {
        let long = String(repeating: "abcdefghij", count: 30)
        XCTAssertEqual(searchBox(long), [6])
        XCTAssertEqual(searchBox(long + "klmnop"), [6], "a longer word than the row's still finds it: a prefix")
        XCTAssertEqual(try FullTextPattern.searchBox(long).matchExpression(), "\"" + long.prefix(256) + "*\"")
        XCTAssertEqual(try FullTextPattern.searchBox(String(long.prefix(256))).matchExpression(), "\"" + long.prefix(256) + "\"")
    }

    func testOperatorsPunctuationAndUnbalancedQuotesAlone() throws {
        XCTAssertEqual(searchBox("AND"), reference(["and"]), "a word: one row says data and stock")
        let inputs = [
            "OR", "NOT", "NEAR", "NEAR/3", "AND OR NOT NEAR", "OR OR OR", "\"", "\"\"\"", "(((", ")))", "*", "-", "^",
            ":", "* - ^ :", "- - -", "--", "-\"", "\"-\"", "^:*", "col:", "!!!", "，。！？", "...", "@#$%&", "😀 👍🏽", "\u{301}\u{301}",
            "\u{200B}\u{200D}\u{FEFF}", "\u{FFFD}", "\u{FFFE}\u{FFFF}", "\u{E000}",
        ]
        for input in inputs {
            XCTAssertEqual(searchBox(input), [], "input \(input.debugDescription)")
        }
        let happyNewYear = reference(["happy", "new", "year"])
        XCTAssertEqual(searchBox("NEAR happy"), [], "NEAR is a word: no row holds it")
        XCTAssertEqual(searchBox("\"happy new"), try ids(.phrase("happy new")))
        XCTAssertTrue(searchBox("\"happy new").contains(5))
        XCTAssertEqual(searchBox("happy\" new\"\" year\""), happyNewYear)
        XCTAssertEqual(searchBox("\"happy new\" \"year"), try ids(.phrase("happy new") && .term("year")))
        XCTAssertEqual(searchBox("(happy) year: new^"), happyNewYear)
    }

    // MARK: - Seeded property test

    func testSeededInputsNeverThrowAndWordsOfTheRowsFindWhatAScanFinds() throws {
        var random = SeededGenerator(seed: 0xF75_B0C5)
        let cap = FullTextPattern.searchBoxMaximumTerms
        // Hostile strings: never an error, and a bounded MATCH text without control characters.
        for _ in 0..<300 {
            let input = Self.hostile(&random)
            _ = searchBox(input)
            let pattern = FullTextPattern.searchBox(input)
            guard !pattern.matchesNothing else { continue }
            let positive = try pattern.matchExpression()
            let excluded = pattern.excludedMatchExpression() ?? ""
            let text = positive + excluded
            XCTAssertFalse(text.unicodeScalars.contains { $0.properties.generalCategory == .control }, input.debugDescription)
            XCTAssertLessThanOrEqual(text.filter { $0 == "\"" }.count, 2 * cap, input.debugDescription)
            XCTAssertLessThanOrEqual(text.unicodeScalars.count, cap * (FullTextPattern.searchBoxMaximumTermLength + 8))
        }
        // Words of the rows, between random separators: the rows found equal the scan's for the first 32.
        var nonEmpty = 0
        for round in 0..<250 {
            var words: [String]
            if round % 5 == 0 {
                // Past the cap: 32 words of one row, then words no row holds, which must not be read.
                let ids = rows.keys.sorted()
                let own = Self.words(of: rows[ids[random.next(upTo: ids.count)], default: []])
                words = (0..<cap).map { _ in own[random.next(upTo: own.count)] }
                words += (0...random.next(upTo: 12)).map { _ in ["zzyzx", "鑫淼", "Quux"][random.next(upTo: 3)] }
            } else {
                words = (0...random.next(upTo: 2)).map { _ in self.word(&random) }
            }
            var input = ""
            for word in words {
                input += Self.separators[random.next(upTo: Self.separators.count)]
                input += random.next(upTo: 4) == 0 ? word.capitalized : word
            }
            let expected = reference(Array(words.prefix(cap)))
            XCTAssertEqual(searchBox(input), expected, "input \(input.debugDescription)")
            if !expected.isEmpty { nonEmpty += 1 }
        }
        XCTAssertGreaterThan(nonEmpty, 150, "most inputs find rows")
    }

    /// The words of a row: its English tokens and 1–3-character pieces of its CJK runs.
    private static func words(of texts: [String]) -> [String] {
        var words: [String] = []
        for text in texts {
            words += tokens(text).sorted().filter { $0 != "or" }  // sorted: a Set's order changes per process
            for run in text.split(whereSeparator: { !$0.unicodeScalars.allSatisfy { $0.value >= 0x3400 && $0.value < 0xFF00 } }) {
                let characters = Array(run)
                for start in characters.indices {
                    words.append(String(characters[start..<min(start + 1 + start % 3, characters.count)]))
                }
            }
        }
        return words.isEmpty ? ["zzyzx"] : words
    }

    /// An English word, or a piece of a row's CJK run (sometimes characters drawn at random).
    private func word(_ random: inout SeededGenerator) -> String {
        switch random.next(upTo: 3) {
        case 0: return Self.english[random.next(upTo: Self.english.count)]
        case 1: return String((0...random.next(upTo: 2)).map { _ in Self.chinese[random.next(upTo: Self.chinese.count)] })
        default:
            let texts = rows[Int64(1 + random.next(upTo: rows.count)), default: []]
            let own = Self.words(of: texts)
            return own[random.next(upTo: own.count)]
        }
    }

    /// Random scalars of every kind and operator soup, up to 60 pieces (a few inputs far past the cap).
    private static func hostile(_ random: inout SeededGenerator) -> String {
        let operators = ["AND", "OR", "NOT", "NEAR", "NEAR/2", "\"", "(", ")", "*", "-", "^", ":", " ", "col:", "-\"", "OR "]
        var text = ""
        let count = random.next(upTo: 50) == 0 ? 2000 : random.next(upTo: 61)
        for _ in 0..<count {
            switch random.next(upTo: 14) {
            case 0: text += operators[random.next(upTo: operators.count)]
            case 1: text += " " + operators[random.next(upTo: operators.count)] + " "
            case 2: text.unicodeScalars.append(Unicode.Scalar(UInt8(random.next(upTo: 0x20))))
            case 3: text += "\0"
            case 4: text += String(chinese[random.next(upTo: chinese.count)])
            case 5: text += scalar(0x4E00...0x9FFF, &random)
            case 6: text += emoji[random.next(upTo: emoji.count)]
            case 7: text += scalar(0x1F300...0x1FAFF, &random)
            case 8: text += scalar(0x300...0x36F, &random)
            case 9:
                text +=
                    ["\u{200D}", "\u{200B}", "\u{FEFF}", "\u{FFFD}", "\u{FFFE}", "\u{E000}", "\u{7F}", "\u{9B}"][
                        random.next(upTo: 8)]
            case 10: text += scalar(0x21...0x7E, &random)
            case 11: text += scalar(0...0x10FFFF, &random)
            case 12: text += " " + english[random.next(upTo: english.count)]
            default: text += " "
            }
        }
        return text
    }

    /// A scalar drawn from `range`, skipping the surrogates (a Swift string cannot hold them).
    private static func scalar(_ range: ClosedRange<UInt32>, _ random: inout SeededGenerator) -> String {
        let value = range.lowerBound + UInt32(random.next(upTo: Int(range.upperBound - range.lowerBound) + 1))
        return Unicode.Scalar(value).map { String(Character($0)) } ?? "\u{FFFD}"
    }
}
