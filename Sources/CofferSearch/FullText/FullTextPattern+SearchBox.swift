import CofferEngine
import CofferRecords

extension FullTextPattern {
    /// The most words and phrases ``searchBox(_:)`` keeps: the first 32 of the input, in its order.
    ///
    /// FTS parses a MATCH text into a tree of at most 12 levels (`SQLITE_FTS3_MAX_EXPR_DEPTH`) and
    /// fails on a deeper one: a pasted 5,000-word text gave "FTS expression tree is too large". With 32
    /// terms the tree has 6 levels when they are all AND-ed, and at most 10 in the worst mix of AND and
    /// OR (17 AND-ed groups, one of them 16 words joined by `OR`); a search of more than 32 words already
    /// matches few rows, so the words after them add little.
    public static let searchBoxMaximumTerms = 32

    /// The longest word or phrase, in Unicode scalars, that ``searchBox(_:)`` searches as typed: a longer
    /// one keeps its first 256 scalars and is searched as a prefix there, so it still finds every row the
    /// whole word or phrase would. It bounds the query's tokens and length (a pasted megabyte of Chinese
    /// has no space in it and would be one phrase of a million tokens; one `Character` can hold any number
    /// of combining marks, so the count is of scalars).
    public static let searchBoxMaximumTermLength = 256

    /// What a user typed into a search box, as a pattern that never raises an FTS syntax error.
    ///
    /// Words must all match (AND); `"quoted words"` are a phrase (an unbalanced quote runs to the end);
    /// a word ending in `*` is a prefix; `OR` (in capitals) between two words or phrases matches either;
    /// `-word` leaves out rows holding it when something else is searched for. Whitespace and control
    /// characters (NUL included) separate words. Every other character (`(`, `)`, `NEAR`, `^`, `:`,
    /// emoji…) is text handed to the tokenizer inside quotes, never an operator. Empty input, or input
    /// without a word, gives ``nothing``.
    ///
    /// Any input is bounded: only the first ``searchBoxMaximumTerms`` (32) words and phrases are kept,
    /// `-word`s included (an `OR`, or a word without a letter or digit, is not counted), and a word or
    /// phrase longer than ``searchBoxMaximumTermLength`` (256 Unicode scalars) is cut there and searched
    /// as a prefix. The input after the last kept term is not read.
    ///
    /// ```swift
    /// try Message.matching(.searchBox("\"new year\" 晚会 -draft")).fetchAll(db)
    /// ```
    public static func searchBox(_ input: String) -> FullTextPattern {
        var pattern = FullTextPattern.nothing
        var excluded = FullTextPattern.nothing
        var pendingOr: FullTextPattern?
        var orNext = false
        var kept = 0
        for piece in SearchBoxPieces(input) {
            guard kept < searchBoxMaximumTerms else { break }
            switch piece {
            case .or:
                orNext = pendingOr != nil
                continue
            case .word(let text, let negated, let prefix):
                let item = prefix ? FullTextPattern.prefix(text) : .phrase(text)
                if item.matchesNothing { continue }  // no letter or digit: nothing to search for
                kept += 1
                if negated {
                    excluded = excluded || item
                    orNext = false
                    continue
                }
                if orNext, let previous = pendingOr {
                    pendingOr = previous || item
                } else {
                    if let previous = pendingOr { pattern = pattern.isEmptyAnd ? previous : pattern && previous }
                    pendingOr = item
                }
                orNext = false
            }
        }
        if let previous = pendingOr { pattern = pattern.isEmptyAnd ? previous : pattern && previous }
        return pattern.matchesNothing ? .nothing : pattern.excluding(excluded)
    }

    /// True for ``nothing`` used as the start of an AND chain.
    private var isEmptyAnd: Bool { clauses.isEmpty && excluded.isEmpty && invalidReason == nil }
}

/// A piece of search-box input: a word or phrase (maybe negated, maybe a prefix), or `OR`.
private enum SearchBoxPiece {
    case word(String, negated: Bool, prefix: Bool)
    case or
}

/// The pieces of search-box input, read one at a time (``FullTextPattern/searchBox(_:)`` stops reading
/// at its term limit, so a pasted megabyte is not split whole). It reads Unicode scalars, as the
/// tokenizers do: no grapheme breaking, and one `Character` may carry any number of combining marks.
private struct SearchBoxPieces: Sequence, IteratorProtocol {
    private var rest: Substring.UnicodeScalarView

    init(_ input: String) { rest = input[...].unicodeScalars }

    mutating func next() -> SearchBoxPiece? {
        while let first = rest.first {
            if Self.isSeparator(first) {
                rest = rest.dropFirst()
                continue
            }
            var negated = false
            if first == "-", let following = rest.dropFirst().first, !Self.isSeparator(following) {
                negated = true
                rest = rest.dropFirst()
            }
            var text: Substring.UnicodeScalarView
            var prefix: Bool
            if rest.first == "\"" {
                let quoted = rest.dropFirst()
                let end = quoted.firstIndex(of: "\"") ?? quoted.endIndex
                text = quoted[..<end]
                rest = end < quoted.endIndex ? quoted[quoted.index(after: end)...] : quoted[end...]
                prefix = text.last == "*"
            } else {
                let end = rest.firstIndex { Self.isSeparator($0) || $0 == "\"" } ?? rest.endIndex
                text = rest[..<end]
                rest = rest[end...]
                if !negated && text.elementsEqual("OR".unicodeScalars) { return .or }
                prefix = text.last == "*" && !text.dropFirst().isEmpty
            }
            let limit = FullTextPattern.searchBoxMaximumTermLength
            if let cut = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex), cut < text.endIndex {
                text = text[..<cut]
                prefix = true
            }
            // No letter or digit: nothing to search for, and no copy of the text made.
            guard text.contains(where: FullTextPattern.isWordScalar) else { continue }
            return .word(String(text), negated: negated, prefix: prefix)
        }
        return nil
    }

    /// Whitespace (Unicode's White_Space) and control characters (NUL, the other C0 and C1 controls) end
    /// a word.
    private static func isSeparator(_ scalar: Unicode.Scalar) -> Bool {
        if scalar.isASCII { return scalar.value <= 0x20 || scalar.value == 0x7F }  // controls and space
        return scalar.properties.isWhitespace || scalar.properties.generalCategory == .control
    }
}
