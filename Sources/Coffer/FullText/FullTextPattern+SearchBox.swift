extension FullTextPattern {
    /// What a user typed into a search box, as a pattern that never raises an FTS syntax error.
    ///
    /// Words must all match (AND); `"quoted words"` are a phrase (an unbalanced quote runs to the end);
    /// a word ending in `*` is a prefix; `OR` (in capitals) between two words or phrases matches either;
    /// `-word` leaves out rows holding it when something else is searched for. Every other character
    /// (`(`, `)`, `NEAR`, `^`, emoji…) is text handed to the tokenizer inside quotes, never an operator.
    /// Empty input, or input without a word, gives ``nothing``.
    ///
    /// ```swift
    /// try Message.matching(.searchBox("\"new year\" 晚会 -draft")).fetchAll(db)
    /// ```
    public static func searchBox(_ input: String) -> FullTextPattern {
        var pattern = FullTextPattern.nothing
        var excluded = FullTextPattern.nothing
        var pendingOr: FullTextPattern?
        var orNext = false
        for piece in SearchBoxPiece.split(input) {
            switch piece {
            case .or:
                orNext = pendingOr != nil
                continue
            case .word(let text, let negated, let prefix):
                let item = prefix ? FullTextPattern.prefix(text) : .phrase(text)
                if item.matchesNothing { continue }  // no letter or digit: nothing to search for
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

    static func split(_ input: String) -> [SearchBoxPiece] {
        var pieces: [SearchBoxPiece] = []
        var characters = input[...]
        while let first = characters.first {
            if first.isWhitespace {
                characters = characters.dropFirst()
                continue
            }
            var negated = false
            if first == "-", let next = characters.dropFirst().first, !next.isWhitespace {
                negated = true
                characters = characters.dropFirst()
            }
            if characters.first == "\"" {
                let rest = characters.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                let phrase = rest[..<end]
                let prefix = phrase.last == "*"
                pieces.append(.word(String(phrase), negated: negated, prefix: prefix))
                characters = end < rest.endIndex ? rest[rest.index(after: end)...] : rest[end...]
                continue
            }
            let end = characters.firstIndex { $0.isWhitespace || $0 == "\"" } ?? characters.endIndex
            let word = characters[..<end]
            characters = characters[end...]
            if word == "OR" && !negated {
                pieces.append(.or)
            } else {
                pieces.append(.word(String(word), negated: negated, prefix: word.count > 1 && word.last == "*"))
            }
        }
        return pieces
    }
}
