import CSQLCipher
import CofferEngine
import CofferRecords
internal import CofferTokenizer

/// What to look for in a full-text index: terms, phrases, prefixes, NEAR groups, combined with AND, OR
/// and NOT; or what a user typed into a search box (``searchBox(_:)``), which never fails.
///
/// Every piece of text becomes a quoted FTS phrase, so nothing in it is read as an operator. A pattern is
/// kept as an AND of OR-groups (`a OR b` AND `c`) and combinations are distributed into that shape, which
/// both of FTS's query syntaxes can say: the standard one (Debian's SQLCipher 3.4.1: no parentheses, OR
/// binding tighter than AND) as it is, the enhanced one (SQLCipher 4's builds) with each group in parentheses.
///
/// ```swift
/// let hits = try Message.matching(.term("hello") && (.phrase("你好世界") || .prefix("wor")))
///     .filter { $0.conversationID == 7 }.fetchAll(db)
/// let typed = try Message.matching(.searchBox(textField.text)).fetchAll(db)
/// ```
public struct FullTextPattern: Sendable, Equatable {
    /// A quoted phrase, or a NEAR group of them, as FTS query text.
    struct Atom: Sendable, Equatable {
        var phrases: [Phrase]
        var distance = 0
        var text: String {
            phrases.count == 1 ? phrases[0].quoted : phrases.map(\.quoted).joined(separator: " NEAR/\(distance) ")
        }

        /// The atom in `engine`'s syntax: FTS5 writes a NEAR group as `NEAR("a" "b", distance)`.
        func text(for engine: FullTextEngine) -> String {
            guard engine == .fts5 else { return text }
            if phrases.count == 1 { return phrases[0].fts5Quoted }
            return "NEAR(" + phrases.map(\.fts5Quoted).joined(separator: " ") + ", \(distance))"
        }
    }

    /// One quoted phrase: its words, and whether it ends in `*` (asked for, or because it ends in CJK).
    struct Phrase: Sendable, Equatable {
        var words: String
        var isPrefix: Bool
        /// The `*` only stands for the CJK character that may follow (see ``quoted(_:prefix:)``).
        var endsInCJK: Bool
        var quoted: String { "\"" + words + (isPrefix || endsInCJK ? "*" : "") + "\"" }
        /// FTS5's spelling: the prefix `*` after the closing quote.
        var fts5Quoted: String { "\"" + words + "\"" + (isPrefix || endsInCJK ? " *" : "") }
    }

    /// Rows match every clause; a clause matches when one of its atoms does.
    var clauses: [[Atom]]
    /// Rows matching any of these are left out.
    var excluded: [Atom]
    /// Why this pattern cannot be written in FTS's syntax (running it throws this).
    var invalidReason: String?

    init(clauses: [[Atom]], excluded: [Atom] = [], invalidReason: String? = nil) {
        self.clauses = clauses
        self.excluded = excluded
        self.invalidReason = invalidReason
    }

    /// A pattern that matches no row (what an empty search box gives).
    public static let nothing = FullTextPattern(clauses: [])

    /// True when the pattern matches no row whatever the index holds.
    public var matchesNothing: Bool { clauses.isEmpty && invalidReason == nil }

    /// One word; CJK text is found wherever it occurs, also inside a longer run of CJK characters.
    public static func term(_ word: String) -> FullTextPattern { phrase(word) }

    /// Words in this order, next to each other. Quotes, `*` and control characters (NUL included) in
    /// `text` are separators. Text without a letter or digit (punctuation, emoji alone) matches nothing.
    public static func phrase(_ text: String) -> FullTextPattern {
        guard let phrase = quoted(text, prefix: false) else { return .nothing }
        return FullTextPattern(clauses: [[Atom(phrases: [phrase])]])
    }

    /// Words starting with `text` (its last word a prefix: `.prefix("wor")` finds "world").
    public static func prefix(_ text: String) -> FullTextPattern {
        guard let phrase = quoted(text, prefix: true) else { return .nothing }
        return FullTextPattern(clauses: [[Atom(phrases: [phrase])]])
    }

    /// Phrases each within `distance` tokens of the next (FTS's `NEAR/distance`). A CJK bigram is a token.
    public static func near(_ phrases: [String], distance: Int = 10) -> FullTextPattern {
        let parts = phrases.compactMap { quoted($0, prefix: false) }
        guard parts.count == phrases.count else { return .nothing }
        guard parts.count > 1 else { return phrases.first.map(phrase) ?? .nothing }
        return FullTextPattern(clauses: [[Atom(phrases: parts, distance: max(distance, 0))]])
    }

    /// Rows matching both patterns.
    public static func && (lhs: FullTextPattern, rhs: FullTextPattern) -> FullTextPattern {
        if lhs.matchesNothing || rhs.matchesNothing { return .nothing }
        return FullTextPattern(
            clauses: lhs.clauses + rhs.clauses, excluded: lhs.excluded + rhs.excluded,
            invalidReason: lhs.invalidReason ?? rhs.invalidReason)
    }

    /// Rows matching either pattern. A side with an exclusion cannot be written in FTS's syntax.
    public static func || (lhs: FullTextPattern, rhs: FullTextPattern) -> FullTextPattern {
        if let reason = lhs.invalidReason ?? rhs.invalidReason { return FullTextPattern(clauses: [], invalidReason: reason) }
        if lhs.matchesNothing { return rhs }
        if rhs.matchesNothing { return lhs }
        guard lhs.excluded.isEmpty && rhs.excluded.isEmpty else {
            return FullTextPattern(clauses: [], invalidReason: "a pattern with an exclusion cannot be one side of an OR")
        }
        // (a1 ∧ a2) ∨ (b1 ∧ b2) = ∧ over i, j of (ai ∨ bj).
        return FullTextPattern(clauses: lhs.clauses.flatMap { left in rhs.clauses.map { left + $0 } })
    }

    /// Rows matching `self` but not `other`. `other` must be a term, phrase, prefix, NEAR group or an OR
    /// of those.
    public func excluding(_ other: FullTextPattern) -> FullTextPattern {
        if other.matchesNothing { return self }
        guard other.clauses.count == 1, other.excluded.isEmpty, other.invalidReason == nil else {
            return FullTextPattern(clauses: [], invalidReason: "only terms, phrases, prefixes or their OR can be excluded")
        }
        return FullTextPattern(clauses: clauses, excluded: excluded + other.clauses[0], invalidReason: invalidReason)
    }

    /// The pattern's positive part in FTS4's standard query syntax, for `MATCH` in hand-written SQL (its
    /// exclusions are ``excludedMatchExpression()``: FTS's `-` applies to single words only, so Coffer
    /// leaves excluded rows out with a second MATCH, `rowid NOT IN (…)`). Throws `CofferError.apiMisuse`
    /// for a combination that cannot be expressed (an exclusion inside an OR, or only exclusions).
    public func matchExpression() throws -> String { try matchExpression(for: .fts4) }

    /// The pattern's positive part in `engine`'s query syntax: FTS4's as ``matchExpression()`` gives it,
    /// or FTS5's (`"words" *` for a prefix, `NEAR(…, n)`, OR-groups in parentheses joined by `AND`) for
    /// an index declared with ``FullTextEngine/fts5``. Throws as ``matchExpression()``.
    ///
    /// ```swift
    /// let text = try FullTextPattern.searchBox("new year").matchExpression(for: Message.fullTextIndex.engine)
    /// ```
    public func matchExpression(for engine: FullTextEngine) throws -> String {
        if let invalidReason { throw CofferError(code: .apiMisuse, message: "full-text pattern: \(invalidReason)") }
        guard !clauses.isEmpty || excluded.isEmpty else {
            throw CofferError(
                code: .apiMisuse, message: "full-text pattern: a pattern of exclusions alone matches nothing FTS can list")
        }
        // One term, phrase or prefix (the common search) without building arrays.
        if clauses.count == 1, clauses[0].count == 1 { return clauses[0][0].text(for: engine) }
        if engine == .fts5 {
            // FTS5: NOT, then AND, then OR; groups are parenthesized whenever there is more than one.
            return clauses.map { group in
                let alternatives = group.map { $0.text(for: .fts5) }.joined(separator: " OR ")
                return clauses.count > 1 && group.count > 1 ? "(" + alternatives + ")" : alternatives
            }.joined(separator: " AND ")
        }
        // An AND of OR-groups. In the standard syntax OR binds tighter than the implicit AND, so the groups
        // need nothing around them; in the enhanced syntax AND binds tighter, so each group is parenthesized.
        let enhanced = Self.usesEnhancedQuerySyntax && clauses.count > 1
        return clauses.map { group in
            let alternatives = group.map(\.text).joined(separator: " OR ")
            return enhanced && group.count > 1 ? "(" + alternatives + ")" : alternatives
        }.joined(separator: " ")
    }

    /// Whether the linked SQLite parses full-text queries in FTS3's enhanced syntax (built with
    /// `SQLITE_ENABLE_FTS3_PARENTHESIS`, as SQLCipher 4's own builds are: parentheses, and AND binding tighter
    /// than OR) rather than the standard one (Debian's SQLCipher 3.4.1: OR binding tighter than the implicit
    /// AND). ``matchExpression()`` writes what the linked library reads as meant.
    package static let usesEnhancedQuerySyntax = sqlite3_compileoption_used("ENABLE_FTS3_PARENTHESIS") != 0

    /// The excluded part as one OR-group in FTS4's syntax, or nil when nothing is excluded.
    public func excludedMatchExpression() -> String? { excludedMatchExpression(for: .fts4) }

    /// The excluded part as one OR-group in `engine`'s syntax, or nil when nothing is excluded.
    public func excludedMatchExpression(for engine: FullTextEngine) -> String? {
        excluded.isEmpty ? nil : excluded.map { $0.text(for: engine) }.joined(separator: " OR ")
    }

    /// The numbers FTS gives (in `offsets()`) to the query tokens that are a CJK phrase's last character
    /// searched as a prefix only to reach past a run's end: a hit on one of them covers one character
    /// more than was asked for. Empty when the tokenizer cannot count.
    var trailingCJKTerms: Set<Int> {
        var marks = Set<Int>()
        var next = 0
        for phrase in clauses.joined().flatMap(\.phrases) {
            let count = coffer_fts_count_tokens(phrase.words, Int32(phrase.words.utf8.count))
            guard count >= 0 else { return [] }
            if phrase.endsInCJK && !phrase.isPrefix && count > 0 { marks.insert(next + Int(count) - 1) }
            next += Int(count)
        }
        return marks
    }

    /// `text` as a quoted FTS phrase. A phrase whose last word is CJK ends in `*`: the tokenizer indexes
    /// the character after a CJK run's end as the start of a pair, which the prefix matches. Nil when
    /// `text` holds no letter or digit.
    ///
    /// Every pattern's text goes through here, and this is the one place that makes it safe inside a
    /// MATCH string: a `"` would end the phrase and a `*` make a prefix, so both become spaces, and so do
    /// control characters. FTS parses the MATCH text as a C string (`sqlite3Fts3ExprParse` with length
    /// -1), so a NUL cut the phrase's closing quote off ("malformed MATCH expression"); the tokenizers
    /// split words at every other control character anyway.
    static func quoted(_ text: String, prefix: Bool) -> Phrase? {
        var scalars = String.UnicodeScalarView()
        var lastWordEnd = 0
        var lastWordIsCJK = false
        for (count, scalar) in text.unicodeScalars.enumerated() {
            let separator = scalar == "\"" || scalar == "*" || scalar.properties.generalCategory == .control
            scalars.append(separator ? " " : scalar)
            if !separator && isWordScalar(scalar) {
                lastWordEnd = count + 1
                lastWordIsCJK = coffer_is_cjk(scalar.value) != 0
            }
        }
        guard lastWordEnd > 0 else { return nil }
        let kept = String(String.UnicodeScalarView(scalars.prefix(lastWordEnd)))
        return Phrase(words: kept, isPrefix: prefix, endsInCJK: lastWordIsCJK)
    }

    /// Letters, digits and marks: what unicode61 keeps in tokens.
    static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) }
        switch scalar.properties.generalCategory {
        case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
            .decimalNumber, .letterNumber, .otherNumber, .nonspacingMark, .spacingMark, .enclosingMark, .privateUse:
            return true
        default:
            return false
        }
    }
}
