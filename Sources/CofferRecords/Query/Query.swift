import CofferEngine

/// A request for rows of the table `Root`: filters, order, grouping, limit. Building one runs nothing;
/// `fetchAll`, `fetchCount`, `cursor`, `updateAll` and `deleteAll` run it on a connection.
///
/// Closures receive `Root.Columns`, the typed columns `@Table` generates, so only this table's columns,
/// compared with values of their own type, can appear:
///
/// ```swift
/// let page = try Message
///     .filter { $0.conversationID == conversation && $0.body.contains("50%") }
///     .order { [$0.createdAt.desc, $0.id.asc] }
///     .limit(50, offset: 100)
///     .fetchAll(db)
/// ```
public struct Query<Root: TableRecord>: Sendable {
    package var filters: [SQLFragment] = []
    var orderings: [SQLFragment] = []
    var groupings: [SQLFragment] = []
    var havings: [SQLFragment] = []
    package var limitValue: Int?
    package var offsetValue: Int?
    /// A `SELECT … AS rowid` that drives the query, read first (see `driven(by:)`); nil: the table is read.
    var rowSource: SQLFragment?

    /// All rows of `Root`.
    public init() {}

    /// Keeps rows where `predicate` is true; several filters are joined with AND.
    public func filter<E: TypedExpression>(_ predicate: (Root.Columns) -> E) -> Query
    where E.Root == Root, E.Value == Bool {
        var query = self
        query.filters.append(predicate(Root.columns).sqlFragment)
        return query
    }

    /// Keeps rows where a hand-written condition is true: `.filter(sql: "length(body) > \(10)")`.
    public func filter(sql: SQL) -> Query {
        var query = self
        query.filters.append(sql.fragment)
        return query
    }

    /// Sorts by one term, after any previous ordering.
    public func order(_ ordering: (Root.Columns) -> Ordering<Root>) -> Query {
        var query = self
        query.orderings.append(ordering(Root.columns).sqlFragment)
        return query
    }

    /// Sorts by several terms, after any previous ordering.
    public func order(_ orderings: (Root.Columns) -> [Ordering<Root>]) -> Query {
        var query = self
        query.orderings += orderings(Root.columns).map(\.sqlFragment)
        return query
    }

    /// Groups rows by one expression (`GROUP BY`).
    public func group<E: SQLExpressionConvertible>(by expression: (Root.Columns) -> E) -> Query where E.Root == Root {
        var query = self
        query.groupings.append(expression(Root.columns).sqlFragment)
        return query
    }

    /// Groups rows by several expressions.
    public func group(by expressions: (Root.Columns) -> [any SQLExpressionConvertible<Root>]) -> Query {
        var query = self
        query.groupings += expressions(Root.columns).map(\.sqlFragment)
        return query
    }

    /// Keeps groups where `predicate` is true (`HAVING`).
    public func having<E: TypedExpression>(_ predicate: (Root.Columns) -> E) -> Query
    where E.Root == Root, E.Value == Bool {
        var query = self
        query.havings.append(predicate(Root.columns).sqlFragment)
        return query
    }

    /// Returns at most `limit` rows, skipping the first `offset`.
    public func limit(_ limit: Int, offset: Int? = nil) -> Query {
        var query = self
        query.limitValue = limit
        query.offsetValue = offset
        return query
    }

    /// Selects one expression instead of whole records: fetches produce its values.
    ///
    /// ```swift
    /// let names = try Player.filter { $0.score > 100 }.select { $0.name }.fetchAll(db)   // [String]
    /// let best = try Player.select { $0.score.max() }.fetchOne(db)                       // Double?
    /// ```
    public func select<E: TypedExpression>(_ selection: (Root.Columns) -> E) -> SelectQuery<Root, E.Value>
    where E.Root == Root {
        SelectQuery(query: self, selection: [selection(Root.columns).sqlFragment])
    }

    /// Selects several expressions: fetches produce ``Row``s.
    ///
    /// ```swift
    /// let rows = try Message.group { $0.conversationID }
    ///     .select { [$0.conversationID, countAll(Message.self)] }.fetchAll(db)
    /// ```
    public func select(_ selection: (Root.Columns) -> [any SQLExpressionConvertible<Root>]) -> SelectQuery<Root, Row> {
        SelectQuery(query: self, selection: selection(Root.columns).map(\.sqlFragment))
    }
}

extension TableRecord {
    /// A query for all rows of the table.
    public static func all() -> Query<Self> { Query() }

    /// A query for the rows where `predicate` is true.
    ///
    /// ```swift
    /// try Message.filter { $0.conversationID == 42 }.fetchAll(db)
    /// ```
    public static func filter<E: TypedExpression>(_ predicate: (Columns) -> E) -> Query<Self>
    where E.Root == Self, E.Value == Bool {
        Query().filter(predicate)
    }

    /// A query for the rows where a hand-written condition is true.
    ///
    /// ```swift
    /// try Message.filter(sql: "length(body) > \(10)").fetchAll(db)
    /// ```
    public static func filter(sql: SQL) -> Query<Self> { Query().filter(sql: sql) }

    /// A query for all rows, sorted.
    public static func order(_ ordering: (Columns) -> Ordering<Self>) -> Query<Self> { Query().order(ordering) }

    /// A query for all rows, sorted by several terms.
    public static func order(_ orderings: (Columns) -> [Ordering<Self>]) -> Query<Self> { Query().order(orderings) }

    /// A query for one expression over all rows.
    public static func select<E: TypedExpression>(_ selection: (Columns) -> E) -> SelectQuery<Self, E.Value>
    where E.Root == Self {
        Query().select(selection)
    }

    /// A query for several expressions over all rows, fetched as ``Row``s.
    public static func select(_ selection: (Columns) -> [any SQLExpressionConvertible<Self>]) -> SelectQuery<Self, Row> {
        Query().select(selection)
    }

    /// A query grouping all rows by an expression.
    public static func group<E: SQLExpressionConvertible>(by expression: (Columns) -> E) -> Query<Self> where E.Root == Self {
        Query().group(by: expression)
    }

    /// A query grouping all rows by several expressions.
    public static func group(by expressions: (Columns) -> [any SQLExpressionConvertible<Self>]) -> Query<Self> {
        Query().group(by: expressions)
    }

    /// A query for at most `limit` rows, skipping the first `offset`.
    public static func limit(_ limit: Int, offset: Int? = nil) -> Query<Self> { Query().limit(limit, offset: offset) }
}
