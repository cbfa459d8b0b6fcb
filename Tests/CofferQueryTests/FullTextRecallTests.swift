import Coffer
import CofferTestSupport
import XCTest

/// Recall of CJK search: for every query of two or more CJK characters, the rows found equal a
/// brute-force substring scan of the content (seeded, generated chat messages mixing Chinese,
/// Japanese, Korean, English and emoji).
final class FullTextRecallTests: XCTestCase {
    private static let cjk = Array("我你他们的是在有不了人这中大为上个国和地到以说时要就出会可也子对生能而那得于着下自之年过发后作里用道行所然家种事成")
    private static let kana = Array("あいうえおかきくけこさしすせそたちつてとなにぬねのアイウエオカキクケコーサシスセソ")
    private static let hangul = Array("가나다라마바사아자차카타파하한국어서울")
    private static let words = [
        "hello", "meeting", "tomorrow", "ok", "lunch", "Zoom", "déjà", "vu", "2026", "NEAR", "-", "\"", "(", "*",
    ]
    private static let emoji = ["😀", "👍🏽", "🇨🇳", "👨‍👩‍👧", "❤️"]

    private func message(_ random: inout SeededGenerator, alphabet: [Character]) -> String {
        var text = ""
        let target = 5 + random.next(upTo: 120)
        while text.count < target {
            switch random.next(upTo: 10) {
            case 0..<5:
                // Runs drawn from a small slice of the alphabet, so that substrings recur across rows.
                let length = 1 + random.next(upTo: 12)
                for _ in 0..<length { text.append(alphabet[random.next(upTo: alphabet.count)]) }
            case 5..<8: text += " " + Self.words[random.next(upTo: Self.words.count)] + " "
            case 8: text += Self.emoji[random.next(upTo: Self.emoji.count)]
            default: text += random.next(upTo: 2) == 0 ? "，" : " "
            }
        }
        return text
    }

    func testEveryCJKQueryOfTwoOrMoreCharactersFindsExactlyTheRowsHoldingIt() throws {
        var random = SeededGenerator(seed: 0x23_F75)
        let alphabet = Self.cjk + Self.kana.prefix(12) + Self.hangul.prefix(8)
        let database = try Database.inMemory()
        var bodies: [Int64: String] = [:]
        try database.write { db in
            _ = try db.upgradeSchema(for: [ChatMessage.self])
            for _ in 0..<600 {
                var row = ChatMessage(id: nil, conversationID: 1, sender: "s", body: message(&random, alphabet: alphabet))
                try row.insert(db)
                bodies[try XCTUnwrap(row.id)] = row.body
            }
        }
        // Queries: substrings of the rows' CJK runs (2–6 characters), and random strings (mostly absent).
        var queries = Set<String>()
        let texts = Array(bodies.values)
        while queries.count < 400 {
            let characters = Array(texts[random.next(upTo: texts.count)])
            let length = 2 + random.next(upTo: 5)
            guard characters.count >= length else { continue }
            let start = random.next(upTo: characters.count - length + 1)
            let candidate = characters[start..<start + length]
            if candidate.allSatisfy({ alphabet.contains($0) }) { queries.insert(String(candidate)) }
        }
        for _ in 0..<200 {
            queries.insert(String((0..<(2 + random.next(upTo: 2))).map { _ in alphabet[random.next(upTo: alphabet.count)] }))
        }
        var nonEmpty = 0
        try database.read { db in
            for query in queries.sorted() {
                let found = Set(try ChatMessage.matching(.term(query)).fetchAll(db).compactMap(\.id))
                let expected = Set(bodies.filter { $0.value.contains(query) }.keys)
                XCTAssertEqual(found, expected, "query \(query)")
                if !expected.isEmpty { nonEmpty += 1 }
            }
        }
        XCTAssertGreaterThan(nonEmpty, 400, "most queries have hits")
    }
}
