// Matching a full-text index from the query builder. `matching(_:)` drives the query from the index's
// cursor (a row source: SQLite reads the hits in docid order and stops at a LIMIT) and still combines
// with every other filter, ordering, join, count, `updateAll` and `deleteAll` (those take it as a
// `rowid IN (…)` filter); `matches(_:)` is that filter as an expression, for `||` and the like.

import CofferEngine
import CofferRecords

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

    /// A query for the rows the index finds for a MATCH text given each time the prepared query runs
    /// (a pattern's ``FullTextPattern/matchExpression(for:)`` for the index's engine; see `Query.matching(_:)`).
    public static func matching(_ expression: QueryParameter<String>) -> Query<Self> { Query().matching(expression) }
}

extension Query where Root: FullTextSearchable {
    /// `matching(_:)` for a ``PreparedQuery``: the MATCH text is given each time the
    /// query runs — a pattern's ``FullTextPattern/matchExpression(for:)`` for the index's
    /// ``FullTextIndex/engine`` — so a search box's queries render
    /// their SQL once and only bind the text. A pattern's exclusions are not in its match expression:
    /// search those with `matching(_:)` and the pattern itself.
    ///
    /// ```swift
    /// let search = try Message.matching(.parameter).limit(50).prepared()
    /// let hits = try search.fetchAll(db, try FullTextPattern.term("hello").matchExpression())
    /// ```
    public func matching(_ expression: QueryParameter<String>) -> Query {
        driven(by: Root.fullTextIndex.docids(matching: expression.sqlFragment))
    }

    /// Keeps the rows the index finds for `pattern`, besides the other filters. SQLite reads the index's
    /// hits first and each row by rowid, so a limited page of a common word stops early; a second
    /// `matching` on the same query is a `rowid IN (…)` filter.
    public func matching(_ pattern: FullTextPattern) -> Query {
        let index = Root.fullTextIndex
        if pattern.matchesNothing { return filter(sql: SQL(fragment: SQLFragment(raw: "0"))) }
        do {
            var query = driven(by: index.docids(try pattern.matchExpression(for: index.engine)))
            if let excluded = pattern.excludedMatchExpression(for: index.engine) {
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
    /// `SELECT docid AS rowid FROM <index> WHERE <index> MATCH expression` (FTS5: `rowid`): the hits, in
    /// rowid order.
    func docids(_ expression: String) -> SQLFragment { docids(matching: SQLFragment(value: .text(expression))) }

    /// The same, with the MATCH operand given as a fragment (a bound value or a parameter).
    func docids(matching operand: SQLFragment) -> SQLFragment {
        guard let docidsHead else {
            let name = SQLFragment([.identifier(name)])
            return SQLFragment(raw: "SELECT \(engine.rowidColumn) AS rowid FROM ") + name + SQLFragment(raw: " WHERE ") + name
                + SQLFragment(raw: " MATCH ") + operand
        }
        return SQLFragment(raw: docidsHead) + operand
    }
}
