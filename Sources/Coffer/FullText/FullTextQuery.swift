// Matching a full-text index from the query builder. `matching(_:)` drives the query from the index's
// cursor (a row source: SQLite reads the hits in docid order and stops at a LIMIT) and still combines
// with every other filter, ordering, join, count, `updateAll` and `deleteAll` (those take it as a
// `rowid IN (…)` filter); `matches(_:)` is that filter as an expression, for `||` and the like.

extension FullTextSearchable {
    /// `rowid IN (SELECT docid FROM <index> WHERE <index> MATCH pattern)`: true for rows the index finds.
    ///
    /// ```swift
    /// try Message.filter { Message.matches(.term("hello")) || $0.sender == "ops" }.fetchAll(db)
    /// ```
    public static func matches(_ pattern: FullTextPattern) -> SQLExpression<Self, Bool> {
        SQLExpression(Query<Self>.conjunction(Query<Self>().matching(pattern).wholeRowFilters).parenthesized)
    }

    /// A query for the rows the index finds for `pattern`, in the index's order (ascending rowid) unless
    /// ordered otherwise.
    ///
    /// ```swift
    /// let hits = try Message.matching(.searchBox(text)).filter { $0.conversationID == 7 }.fetchAll(db)
    /// ```
    public static func matching(_ pattern: FullTextPattern) -> Query<Self> { Query().matching(pattern) }
}

extension Query where Root: FullTextSearchable {
    /// Keeps the rows the index finds for `pattern`, besides the other filters. SQLite reads the index's
    /// hits first and each row by rowid, so a limited page of a common word stops early; a second
    /// `matching` on the same query is a `rowid IN (…)` filter.
    public func matching(_ pattern: FullTextPattern) -> Query {
        let index = Root.fullTextIndex
        if pattern.matchesNothing { return filter(sql: SQL(fragment: SQLFragment(raw: "0"))) }
        do {
            var query = driven(by: index.docids(try pattern.matchExpression()))
            if let excluded = pattern.excludedMatchExpression() {
                query.filters.append(Self.rowid(in: index.docids(excluded), negated: true))
            }
            return query
        } catch {
            let invalid = SQLFragment([.invalid(error as? CofferError ?? CofferError(code: .apiMisuse, message: "\(error)"))])
            return filter(sql: SQL(fragment: invalid))
        }
    }
}

extension FullTextIndex {
    /// `SELECT docid AS rowid FROM <index> WHERE <index> MATCH expression`: the hits, in docid order.
    func docids(_ expression: String) -> SQLFragment {
        SQLFragment([.raw("SELECT docid AS rowid FROM "), .identifier(name), .raw(" WHERE "), .identifier(name)])
            + SQLFragment(raw: " MATCH ") + SQLFragment(value: .text(expression))
    }
}
