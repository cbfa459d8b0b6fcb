import CofferRecords
internal import CofferTokenizer

extension FullTextPattern {
    /// The most letters, digits and CJK characters of its input that ``pinyin(_:)`` reads: the rest is
    /// ignored, and what was read is searched as a prefix.
    public static let pinyinMaximumLength = 48

    /// The most readings of its input ``pinyin(_:)`` searches for (OR-ed phrases; a run of letters gives
    /// at most 8: the fewest-unit ones, itself as typed and, when short, its initials).
    public static let pinyinMaximumReadings = 16

    /// What a user typed into a contact search box, for an index using ``FullTextTokenizer/pinyin``:
    /// Chinese characters, full pinyin, initials or a mix, with or without spaces between syllables, the
    /// last syllable possibly cut short while typing. `zhangsan`, `zhang san`, `zs`, `zhangs`, `zhang s`,
    /// `张s`, `张三` and `張三` all find 张三; `zgr` and `中guo` find 中国人; `lv` and `lü` find 吕.
    ///
    /// Tone marks are ignored (`zhāng`), `ü` is `v`; spaces, punctuation and control characters separate
    /// syllables; letters of a run with no space are split into every sequence of syllables and initials
    /// (`xian` is `xian`, `xi an`, `x i an`… as far as they are pinyin; `zh`, `ch` and `sh` are initials
    /// too: `zhs` finds 张三 and not 曾三), the fewest first, and the run is
    /// also searched as typed (a Latin nickname). Digits and other scripts are searched as typed. Matches
    /// must be consecutive: the input is one phrase.
    ///
    /// Like ``searchBox(_:)`` it never fails and is bounded: only the first ``pinyinMaximumLength`` (48)
    /// letters, digits and characters are read, and at most ``pinyinMaximumReadings`` (16) readings are
    /// searched. Input without a letter, digit or CJK character gives ``nothing``.
    ///
    /// ```swift
    /// try Contact.search(.pinyin("zhangs")).limit(20).fetchAll(db)
    /// ```
    public static func pinyin(_ input: String) -> FullTextPattern {
        let pieces = PinyinPiece.pieces(of: input)
        guard !pieces.isEmpty else { return .nothing }
        var readings: [[PinyinUnit]] = [[]]
        for (index, piece) in pieces.enumerated() {
            let options = piece.options(isLast: index == pieces.count - 1)
            var next: [[PinyinUnit]] = []
            combining: for reading in readings {
                for option in options {
                    next.append(reading + option)
                    if next.count >= pinyinMaximumReadings { break combining }
                }
            }
            readings = next
        }
        // "\u{1}" (COFFER_PINYIN_QUERY_MARK) makes the tokenizer read each phrase as a query.
        var seen = Set<String>()
        var atoms: [Atom] = []
        for reading in readings {
            guard let last = reading.last else { continue }
            let words = "\u{1}" + reading.map(\.term).joined(separator: " ")
            let phrase = Phrase(words: words, isPrefix: last.isPrefix && !last.isMarked, endsInCJK: false)
            if seen.insert(phrase.quoted).inserted { atoms.append(Atom(phrases: [phrase])) }
        }
        return atoms.isEmpty ? .nothing : FullTextPattern(clauses: [atoms])
    }
}

/// One term of a pinyin reading: a CJK character, a syllable, an initial or a word, maybe a prefix.
struct PinyinUnit: Equatable {
    var text: String
    var isPrefix: Bool

    /// A retroflex initial (`zh`, `ch`, `sh`) as a prefix, searched as the one term the pinyin tokenizer
    /// indexes for it (COFFER_PINYIN_PREFIX_MARK, byte 0x02, then the letters) rather than as `zh*`,
    /// which FTS4 answers by merging every term starting with `zh`. Other prefixes (`li*`) are merged:
    /// a marked term for each would make the index a third larger.
    var isMarked: Bool { isPrefix && PinyinPiece.retroflexInitials.contains(text) }

    /// The unit in a query phrase (without the `*` of a prefix, which ends the phrase).
    var term: String { isMarked ? "\u{2}" + text : text }

    /// A syllable's first letter, or `zh`, `ch`, `sh`: the retroflex initials typed for a syllable.
    var isInitial: Bool { text.utf8.count == 1 || PinyinPiece.retroflexInitials.contains(text) }
}

/// A piece of pinyin input: a CJK character, a run of Latin letters (lowercased, tone marks removed, ü as
/// v), or a word of digits or another script.
enum PinyinPiece: Equatable {
    case character(String)
    case letters([UInt8])
    case word(String)

    /// The pieces of `input`, at most ``FullTextPattern/pinyinMaximumLength`` scalars of them.
    static func pieces(of input: String) -> [PinyinPiece] {
        var pieces: [PinyinPiece] = []
        var letters: [UInt8] = []
        var word = String.UnicodeScalarView()
        var read = 0
        func flush() {
            if !letters.isEmpty { pieces.append(.letters(letters)) }
            if !word.isEmpty { pieces.append(.word(String(word))) }
            letters = []
            word = String.UnicodeScalarView()
        }
        for scalar in input.unicodeScalars {
            guard read < FullTextPattern.pinyinMaximumLength else { break }
            if let letter = foldedLetter(scalar) {
                if !word.isEmpty { flush() }
                letters.append(letter)
                read += 1
            } else if scalar.value == 0x308 {  // a combining diaeresis: u + ̈ is ü
                if letters.last == UInt8(ascii: "u") { letters[letters.count - 1] = UInt8(ascii: "v") }
            } else if (0x300...0x36F).contains(scalar.value) {  // other combining marks: tones
                continue
            } else if coffer_is_cjk(scalar.value) != 0 {
                flush()
                pieces.append(.character(String(scalar)))
                read += 1
            } else if (FullTextPattern.isWordScalar(scalar) && !scalar.isASCII) || ("0"..."9").contains(scalar) {
                if !letters.isEmpty { flush() }
                word.append(scalar)
                read += 1
            } else {
                flush()
            }
        }
        flush()
        return pieces
    }

    /// An ASCII letter, or a Latin vowel with a tone mark or diaeresis, as the lowercase letter a user
    /// types for it (ü → v); nil for anything else.
    private static func foldedLetter(_ scalar: Unicode.Scalar) -> UInt8? {
        let value = scalar.value
        if value < 0x80 {
            if (0x61...0x7A).contains(value) { return UInt8(value) }
            if (0x41...0x5A).contains(value) { return UInt8(value + 0x20) }
            return nil
        }
        return toneMarked[scalar]
    }

    private static let toneMarked: [Unicode.Scalar: UInt8] = {
        var table: [Unicode.Scalar: UInt8] = [:]
        let groups: [(String, Character)] = [
            ("āáǎàĀÁǍÀâÂ", "a"), ("ēéěèĒÉĚÈêÊếềẾỀ", "e"), ("īíǐìĪÍǏÌ", "i"), ("ōóǒòŌÓǑÒ", "o"),
            ("ūúǔùŪÚǓÙ", "u"), ("üǖǘǚǜÜǕǗǙǛ", "v"), ("ńňǹŃŇǸ", "n"), ("ḿḾ", "m"),
        ]
        for (marked, letter) in groups {
            for scalar in marked.unicodeScalars { table[scalar] = letter.asciiValue }
        }
        return table
    }()

    /// The ways this piece can be searched for, best first, when it is the input's last piece or not.
    func options(isLast: Bool) -> [[PinyinUnit]] {
        switch self {
        case .character(let text):
            return [[PinyinUnit(text: text, isPrefix: false)]]
        case .word(let text):
            return [[PinyinUnit(text: text, isPrefix: isLast)]]
        case .letters(let run):
            let text = String(decoding: run, as: UTF8.self)
            // A lone letter last is an initial: its exact term covers every syllable it starts, and a
            // one-letter prefix would read every term of that letter.
            let literal = [PinyinUnit(text: text, isPrefix: isLast)]
            var options: [[PinyinUnit]] = run.count > 1 || !isLast ? [literal] : []
            for reading in Self.segmentations(of: run, lastIsPrefix: isLast, limit: Self.readingsPerRun)
            where !options.contains(reading) {
                options.append(reading)
            }
            return options.isEmpty ? [literal] : options  // a lone `i`, `u` or `v`: no syllable starts with it
        }
    }

    /// The longest syllable: zhuang, shuang, chuang.
    private static let longestSyllable = 6

    /// The longest run of letters also read as initials alone, or with one initial more than its best
    /// reading: each initial's term holds every character it starts, so these readings cost the most.
    private static let shortRun = 4

    /// The most readings of one run of letters searched for (besides the run as typed and its initials).
    private static let readingsPerRun = 6

    /// Syllables of interjections only (嗯, 呣, 哼), never a unit of a longer run: `zhangsan` read as
    /// `zha ng san` would only cost time.
    private static let interjections: Set<String> = ["ng", "hm", "hng"]

    /// The two-letter initials, read as a unit anywhere in a run (`zhs` is `zh s`, 张三), but never
    /// before a syllable starting with a vowel (`zh ang` is `zhang`, which is read anyway).
    static let retroflexInitials: Set<String> = ["zh", "ch", "sh"]

    /// The readings of a run of letters as syllables and initials (a syllable's first letter), the last
    /// one possibly a syllable's prefix when `lastIsPrefix`: of those of at most two units more than the
    /// fewest (and, when more, with at most one more one-letter unit than the best reading, none before
    /// a vowel in a run of more than four letters), the `limit` with the fewest units, then the fewest
    /// one-letter units; then, for a run of at most four letters, the run as initials alone.
    static func segmentations(of run: [UInt8], lastIsPrefix: Bool, limit: Int) -> [[PinyinUnit]] {
        let count = run.count
        guard count > 0 else { return [] }
        func unit(_ start: Int, _ end: Int) -> PinyinUnit? {
            let kind = run.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { base in
                    base.withMemoryRebound(to: CChar.self, capacity: count) {
                        coffer_pinyin_syllable_kind($0 + start, Int32(end - start))
                    }
                } ?? 0
            }
            let canBePrefix = lastIsPrefix && end == count && kind & 2 != 0
            let text = String(decoding: run[start..<end], as: UTF8.self)
            let isRetroflex = end - start == 2 && retroflexInitials.contains(text)
            guard kind & 1 != 0 || (end - start == 1 && kind != 0) || canBePrefix || isRetroflex else { return nil }
            if count > end - start && interjections.contains(text) { return nil }
            return PinyinUnit(text: text, isPrefix: (canBePrefix && end - start > 1) || isRetroflex)
        }
        // The fewest and the most units reading run[i...], or nil.
        var fewest = [Int?](repeating: nil, count: count + 1)
        var most = [Int](repeating: 0, count: count + 1)
        fewest[count] = 0
        for start in stride(from: count - 1, through: 0, by: -1) {
            for length in 1...min(longestSyllable, count - start) {
                guard let rest = fewest[start + length], unit(start, start + length) != nil else { continue }
                fewest[start] = min(fewest[start] ?? Int.max, rest + 1)
                most[start] = max(most[start], most[start + length] + 1)
            }
        }
        guard let best = fewest[0] else { return [] }
        var results: [[PinyinUnit]] = []
        var current: [PinyinUnit] = []
        var steps = 0  // a bound on the work, whatever the input
        // The readings of exactly `units` units, longest units first.
        func search(from start: Int, units: Int) {
            if start == count {
                if current.count == units { results.append(current) }
                return
            }
            for length in stride(from: min(longestSyllable, count - start), through: 1, by: -1) {
                guard results.count < 4 * limit, steps < 10_000 else { return }
                steps += 1
                guard let rest = fewest[start + length], current.count + 1 + rest <= units,
                    current.count + 1 + most[start + length] >= units, let next = unit(start, start + length)
                else { continue }
                current.append(next)
                search(from: start + length, units: units)
                current.removeLast()
            }
        }
        // A pool larger than `limit`, ranked by units then one-letter units (an initial's term is long:
        // every character it starts), then the run read as initials alone if it is short.
        let pool = 4 * limit
        for units in best...best + 2 where results.count < pool {
            search(from: 0, units: units)
        }
        func initials(_ reading: [PinyinUnit]) -> Int { reading.filter(\.isInitial).count }
        // A reading of more units than the fewest splits a syllable into an initial and the rest: kept
        // with one initial more than the best reading (`chong` as `c hong`, 超宏; `liushan` as `liu s han`),
        // not counting a last initial, which is what was typed of the last syllable so far (`chen g`, 陈桂).
        // Beyond a run of `shortRun` letters, an initial before a syllable starting with a vowel is not
        // kept (`zhang s an`: a pinyin keyboard writes `s'an`), since each costs a one-letter term read
        // whole.
        func inner(_ reading: [PinyinUnit]) -> Int {
            initials(reading) - (lastIsPrefix && reading.last?.isInitial == true ? 1 : 0)
        }
        func startsWithVowel(_ unit: PinyinUnit) -> Bool { unit.text.utf8.first.map { "aeo".utf8.contains($0) } == true }
        func initialBeforeVowel(_ reading: [PinyinUnit]) -> Bool {
            zip(reading, reading.dropFirst()).contains { first, next in first.isInitial && startsWithVowel(next) }
        }
        func retroflexBeforeVowel(_ reading: [PinyinUnit]) -> Bool {
            zip(reading, reading.dropFirst()).contains { first, next in
                retroflexInitials.contains(first.text) && startsWithVowel(next)
            }
        }
        let fewestInitials = results.filter { $0.count == best }.map(inner).min() ?? 0
        results.removeAll {
            retroflexBeforeVowel($0)
                || ($0.count > best && (inner($0) > fewestInitials + 1 || (count > shortRun && initialBeforeVowel($0))))
        }
        // In those, a whole last syllable is searched as itself, not as a prefix: a prefix such as `li*`
        // merges many long terms, and the best reading already searches it.
        for index in results.indices where results[index].count > best {
            let last = results[index].count - 1
            let bytes = Array(results[index][last].text.utf8)
            let whole = bytes.withUnsafeBufferPointer { buffer in
                buffer.baseAddress.map { base in
                    base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                        coffer_pinyin_syllable_kind($0, Int32(bytes.count)) & 1 != 0
                    }
                } ?? false
            }
            if whole { results[index][last].isPrefix = false }
        }
        var chosen = results.enumerated()
            .sorted { ($0.element.count, initials($0.element), $0.offset) < ($1.element.count, initials($1.element), $1.offset) }
            .prefix(limit).map(\.element)
        let letters = count <= shortRun ? (0..<count).compactMap { unit($0, $0 + 1) } : []
        if letters.count == count && !chosen.contains(letters) { chosen.append(letters) }
        return chosen
    }
}
