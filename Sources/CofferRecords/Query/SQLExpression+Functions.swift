import CofferEngine
import Foundation

// Predicates and aggregate functions on typed expressions: IS NULL, IN, BETWEEN, LIKE, count, sum…

extension TypedExpression {
    /// `expression IS NULL`.
    public var isNull: SQLExpression<Root, Bool> {
        SQLExpression(sqlFragment.parenthesized + SQLFragment(raw: " IS NULL"))
    }

    /// `expression IS NOT NULL`.
    public var isNotNull: SQLExpression<Root, Bool> {
        SQLExpression(sqlFragment.parenthesized + SQLFragment(raw: " IS NOT NULL"))
    }

    /// `expression IN (?, ?, …)`, every value bound. An empty list matches no row.
    ///
    /// ```swift
    /// Message.filter { $0.id.in([1, 2, 3]) }
    /// ```
    public func `in`(_ values: some Sequence<Value>) -> SQLExpression<Root, Bool> where Value: Encodable {
        let list = values.map { SQLFragment.encoding($0) }
        // `x IN ()` is valid in SQLite and is false; spelled out for clarity.
        return SQLExpression(
            sqlFragment.parenthesized + SQLFragment(raw: " IN ") + SQLFragment.join(list, separator: ", ").parenthesized)
    }

    /// `expression IN (SELECT …)`: the sub-select may read another table, but must produce the same type.
    ///
    /// ```swift
    /// Message.filter { $0.conversationID.in(Conversation.filter { $0.archived == false }.select { $0.id }) }
    /// ```
    public func `in`<Other>(_ subquery: SelectQuery<Other, Value>) -> SQLExpression<Root, Bool> {
        SQLExpression(sqlFragment.parenthesized + SQLFragment(raw: " IN ") + subquery.selectFragment.parenthesized)
    }

    /// `expression IN (SELECT …)` where the sub-select produces the optional of this type (a primary key).
    public func `in`<Other>(_ subquery: SelectQuery<Other, Value?>) -> SQLExpression<Root, Bool> {
        SQLExpression(sqlFragment.parenthesized + SQLFragment(raw: " IN ") + subquery.selectFragment.parenthesized)
    }

    /// `expression BETWEEN low AND high` (both ends included).
    public func between(_ low: Value, and high: Value) -> SQLExpression<Root, Bool> where Value: Encodable {
        SQLExpression(
            sqlFragment.parenthesized + SQLFragment(raw: " BETWEEN ") + .encoding(low)
                + SQLFragment(raw: " AND ") + .encoding(high))
    }

    // MARK: Ordering

    /// Ascending order.
    public var asc: Ordering<Root> { Ordering(sqlFragment.parenthesized + SQLFragment(raw: " ASC")) }

    /// Descending order.
    public var desc: Ordering<Root> { Ordering(sqlFragment.parenthesized + SQLFragment(raw: " DESC")) }

    // MARK: Aggregates

    private func function<Result>(_ name: String, distinct: Bool = false) -> SQLExpression<Root, Result> {
        SQLExpression(SQLFragment(raw: name + (distinct ? "(DISTINCT " : "(")) + sqlFragment + SQLFragment(raw: ")"))
    }

    /// `count(expression)`: the number of non-NULL values.
    public func count(distinct: Bool = false) -> SQLExpression<Root, Int> { function("count", distinct: distinct) }

    /// `sum(expression)`: NULL (nil) over no rows.
    public func sum() -> SQLExpression<Root, Value> { function("sum") }

    /// `total(expression)`: like `sum` but always a Double, 0.0 over no rows.
    public func total() -> SQLExpression<Root, Double> { function("total") }

    /// `avg(expression)`: NULL (nil) over no rows.
    public func average() -> SQLExpression<Root, Double> { function("avg") }

    /// `min(expression)`: NULL (nil) over no rows.
    public func min() -> SQLExpression<Root, Value> { function("min") }

    /// `max(expression)`: NULL (nil) over no rows.
    public func max() -> SQLExpression<Root, Value> { function("max") }
}

/// `count(*)` over the rows of `Root`, for `select` and `having`.
///
/// ```swift
/// Message.group { $0.conversationID }.having { _ in countAll(Message.self) > 10 }
/// ```
public func countAll<Root>(_ root: Root.Type) -> SQLExpression<Root, Int> {
    SQLExpression(SQLFragment(raw: "count(*)"))
}

// MARK: Text

/// The value types LIKE applies to: `String` and `String?`.
public protocol SQLTextValue {}
extension String: SQLTextValue {}
extension Optional: SQLTextValue where Wrapped == String {}

extension TypedExpression where Value: SQLTextValue {
    /// `expression LIKE pattern ESCAPE '\'`: `%` and `_` in `pattern` are wildcards, `\` escapes them.
    /// SQLite's LIKE ignores ASCII case.
    public func like(_ pattern: String) -> SQLExpression<Root, Bool> {
        SQLExpression(
            sqlFragment.parenthesized + SQLFragment(raw: " LIKE ") + SQLFragment(value: .text(pattern))
                + SQLFragment(raw: " ESCAPE '\\'"))
    }

    /// True when the text contains `text` literally, ignoring ASCII case as ``like(_:)`` does: `%`, `_`
    /// and `\` match only themselves.
    ///
    /// `instr(lower(column), lowered text) > 0`: exact for every text, NUL characters included (LIKE
    /// stops reading the value and the pattern at a NUL), and no index could serve a leading `%` anyway.
    public func contains(_ text: String) -> SQLExpression<Root, Bool> {
        SQLExpression(
            SQLFragment(raw: "instr(lower(") + sqlFragment + SQLFragment(raw: "), ")
                + SQLFragment(value: .text(Self.asciiLowercased(text))) + SQLFragment(raw: ") > 0"))
    }

    /// True when the text starts with `prefix` literally, ignoring ASCII case: a LIKE an index can serve
    /// (exact, since a value's characters after a NUL cannot matter to a prefix without one). A `prefix`
    /// holding a NUL, which LIKE cannot express, is compared byte for byte. SQLite refuses LIKE patterns
    /// over 50,000 bytes (`SQLITE_LIMIT_LIKE_PATTERN_LENGTH`) with an error.
    public func hasPrefix(_ prefix: String) -> SQLExpression<Root, Bool> {
        guard prefix.utf8.contains(0) else { return like(Self.escapeLike(prefix) + "%") }
        return leadingOrTrailingBytes(start: "1, ", of: prefix)
    }

    /// True when the text ends with `suffix` literally, ignoring ASCII case: its trailing bytes are
    /// compared, exact for every text, NUL characters included.
    public func hasSuffix(_ suffix: String) -> SQLExpression<Root, Bool> {
        guard !suffix.isEmpty else { return like("%") }
        return leadingOrTrailingBytes(start: "-", of: suffix)
    }

    /// `substr(CAST(lower(text) AS BLOB), <start><byte count>) = <lowered bytes>`: exact for any
    /// bytes, NUL included (`substr` on TEXT would stop at a NUL; on a BLOB it counts bytes).
    private func leadingOrTrailingBytes(start: String, of text: String) -> SQLExpression<Root, Bool> {
        let bytes = Data(Self.asciiLowercased(text).utf8)
        return SQLExpression(
            SQLFragment(raw: "substr(CAST(lower(") + sqlFragment
                + SQLFragment(raw: ") AS BLOB), \(start)\(bytes.count)) = ") + SQLFragment(value: .blob(bytes)))
    }

    /// `text` with ASCII letters lowered, as SQLite's `lower()` and LIKE fold them (other characters kept).
    static func asciiLowercased(_ text: String) -> String {
        String(decoding: text.utf8.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// `text` with LIKE's wildcards and the escape character escaped by `\`.
    static func escapeLike(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            if scalar == "\\" || scalar == "%" || scalar == "_" { escaped.unicodeScalars.append("\\") }
            escaped.unicodeScalars.append(scalar)
        }
        return escaped
    }
}

/// One term of an ORDER BY clause: `$0.createdAt.desc`.
public struct Ordering<Root>: Sendable {
    package let sqlFragment: SQLFragment
    package init(_ fragment: SQLFragment) { self.sqlFragment = fragment }
}
