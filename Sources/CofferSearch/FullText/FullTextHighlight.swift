import CofferEngine
import CofferRecords

/// Where a search's terms matched in one indexed column of a result: ranges of `text`, the column's
/// value, merged where they touch (CJK pairs overlap) and widened to whole characters (an emoji, a
/// letter with its combining marks).
public struct FullTextHighlight: Sendable, Equatable {
    /// The indexed column.
    public let column: String
    /// The column's text.
    public let text: String
    /// The matched ranges of `text`, in order, disjoint.
    public let ranges: [Range<String.Index>]

    /// A window of at most `maximumCharacters` characters of `text` starting a little before the first
    /// range, with the ranges inside it.
    public func snippet(maximumCharacters: Int = 64) -> FullTextSnippet {
        let limit = max(maximumCharacters, 1)
        guard let first = ranges.first else {
            let end = text.index(text.startIndex, offsetBy: limit, limitedBy: text.endIndex) ?? text.endIndex
            return FullTextSnippet(text: text[..<end], highlights: [])
        }
        let lead = max(0, (limit - text[first].count) / 4)
        let start = text.index(first.lowerBound, offsetBy: -lead, limitedBy: text.startIndex) ?? text.startIndex
        let end = text.index(start, offsetBy: limit, limitedBy: text.endIndex) ?? text.endIndex
        let inside = ranges.filter { $0.upperBound <= end }
        return FullTextSnippet(text: text[start..<end], highlights: inside.isEmpty ? [first.lowerBound..<end] : inside)
    }

    /// The highlights of one result from FTS's `offsets()` text (column, term, byte offset, byte length,
    /// repeated). A hit on a term of `trimmedTerms` keeps only its first character.
    static func from(offsets: String, columns: [String], texts: [String], trimmedTerms: Set<Int>) -> [FullTextHighlight] {
        let numbers = offsets.split(separator: " ").compactMap { Int($0) }
        var byColumn = [[Range<String.Index>]](repeating: [], count: columns.count)
        var position = 0
        while position + 3 < numbers.count {
            let (column, term, offset, length) = (
                numbers[position], numbers[position + 1], numbers[position + 2], numbers[position + 3]
            )
            position += 4
            guard columns.indices.contains(column), length > 0 else { continue }
            let text = texts[column]
            let utf8 = text.utf8
            guard offset >= 0, offset + length <= utf8.count else { continue }
            let lower = utf8.index(utf8.startIndex, offsetBy: offset)
            var upper = utf8.index(lower, offsetBy: length)
            if trimmedTerms.contains(term) { upper = text.unicodeScalars.index(after: lower) }
            byColumn[column].append(characterAligned(lower..<upper, in: text))
        }
        return columns.indices.compactMap { column in
            let ranges = merged(byColumn[column])
            return ranges.isEmpty ? nil : FullTextHighlight(column: columns[column], text: texts[column], ranges: ranges)
        }
    }

    /// `range` widened to whole characters of `text`.
    private static func characterAligned(_ range: Range<String.Index>, in text: String) -> Range<String.Index> {
        var lower = range.lowerBound
        while String.Index(lower, within: text) == nil && lower > text.startIndex {
            lower = text.unicodeScalars.index(before: lower)
        }
        var upper = range.upperBound
        while String.Index(upper, within: text) == nil && upper < text.endIndex {
            upper = text.unicodeScalars.index(after: upper)
        }
        return lower..<upper
    }

    /// Sorted, with overlapping or touching ranges joined.
    private static func merged(_ ranges: [Range<String.Index>]) -> [Range<String.Index>] {
        var result: [Range<String.Index>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = result.last, range.lowerBound <= last.upperBound {
                result[result.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                result.append(range)
            }
        }
        return result
    }
}

/// A short window of an indexed column's text with the matched ranges in it. `text` is a slice of the
/// column's value, so the ranges index both.
public struct FullTextSnippet: Sendable, Equatable {
    /// The window.
    public let text: Substring
    /// The matched ranges inside the window.
    public let highlights: [Range<String.Index>]

    /// The window with each match between `open` and `close`, and `ellipsis` where text was cut.
    ///
    /// ```swift
    /// result.snippet()?.marked(open: "<b>", close: "</b>")   // "…happy <b>新年</b> to you…"
    /// ```
    public func marked(open: String = "[", close: String = "]", ellipsis: String = "…") -> String {
        var output = text.startIndex > text.base.startIndex ? ellipsis : ""
        var cursor = text.startIndex
        for range in highlights {
            output += text[cursor..<range.lowerBound] + open + text[range] + close
            cursor = range.upperBound
        }
        output += text[cursor...]
        if text.endIndex < text.base.endIndex { output += ellipsis }
        return output
    }
}
