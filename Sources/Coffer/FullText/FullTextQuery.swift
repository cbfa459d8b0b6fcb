// Matching a full-text index from the query builder: a filter on the content table's rowid, so it
// combines with every other filter, ordering, join, `updateAll` and `deleteAll`.

extension FullTextSearchable {
    /// `rowid IN (SELECT docid FROM <index> WHERE <index> MATCH pattern)`: true for rows the index finds.
    ///
    /// ```swift
    /// try Message.filter { Message.matches(.term("hello")) || $0.sender == "ops" }.fetchAll(db)
    /// ```
    public static func matches(_ pattern: FullTextPattern) -> SQLExpression<Self, Bool> {
        SQLExpression(fullTextIndex.matchFilter(pattern))
    }

    /// A query for the rows the index finds for `pattern`.
    ///
    /// ```swift
    /// let hits = try Message.matching(.searchBox(text)).filter { $0.conversationID == 7 }.fetchAll(db)
    /// ```
    public static func matching(_ pattern: FullTextPattern) -> Query<Self> { Query().matching(pattern) }
}

extension Query where Root: FullTextSearchable {
    /// Keeps the rows the index finds for `pattern`, besides the other filters.
    public func matching(_ pattern: FullTextPattern) -> Query {
        filter(sql: SQL(fragment: Root.fullTextIndex.matchFilter(pattern)))
    }
}

extension FullTextIndex {
    /// The filter fragment: the content table's rowid among the index's hits (never true for a pattern
    /// that matches nothing; a pattern FTS cannot express fails when the query renders).
    func matchFilter(_ pattern: FullTextPattern) -> SQLFragment {
        if pattern.matchesNothing { return SQLFragment(raw: "0") }
        do {
            var filter = hits(try pattern.matchExpression(), negated: false)
            if let excluded = pattern.excludedMatchExpression() {
                filter = filter.parenthesized + SQLFragment(raw: " AND ") + hits(excluded, negated: true).parenthesized
            }
            return filter
        } catch {
            return SQLFragment([.invalid(error as? CofferError ?? CofferError(code: .apiMisuse, message: "\(error)"))])
        }
    }

    /// `rowid [NOT] IN (SELECT docid FROM <index> WHERE <index> MATCH expression)`.
    func hits(_ expression: String, negated: Bool) -> SQLFragment {
        SQLFragment([.column(table: Root.tableName, name: "rowid"), .raw(negated ? " NOT IN" : " IN")])
            + SQLFragment([.raw(" (SELECT docid FROM "), .identifier(name), .raw(" WHERE "), .identifier(name)])
            + SQLFragment(raw: " MATCH ") + SQLFragment(value: .text(expression)) + SQLFragment(raw: ")")
    }
}
