import CofferEngine

/// The scope of expressions over a join of `Left` and `Right`: only columns handed to a join's closures
/// produce expressions in it, so a join cannot be filtered by a third table.
public enum Joined<Left: TableRecord, Right: TableRecord> {}

/// The columns of `Table` inside a join, producing expressions in the join's scope.
///
/// Reached through the closure parameters of ``JoinQuery`` methods: `{ message, conversation in … }`.
@dynamicMemberLookup
public struct JoinedColumns<Table: TableRecord, Scope>: Sendable {
    /// The column named by a key path of the table's generated column set.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Table.Columns, TableColumn<Table, Value>>) -> SQLExpression<
        Scope, Value
    > {
        SQLExpression(Table.columns[keyPath: keyPath].sqlFragment)
    }
}

/// An inner or left join of two tables, fetched as pairs of records.
///
/// ```swift
/// let pairs = try Message.filter { $0.score > 0.5 }
///     .join(Conversation.self) { message, conversation in message.conversationID == conversation.id }
///     .filter { _, conversation in conversation.archived == false }
///     .fetchAll(db)                                    // [(Message, Conversation)]
/// let withOptional = try Message.all()
///     .leftJoin(Conversation.self) { m, c in m.conversationID == c.id }
///     .fetchAll(db)                                    // [(Message, Conversation?)]
/// ```
///
/// `RightValue` is `Right` for an inner join and `Right?` for a left join. Joining a table with itself
/// is not supported (it needs aliases).
public struct JoinQuery<Left: TableRecord, Right: TableRecord, RightValue>: Sendable {
    /// The expression scope of this join.
    public typealias Scope = Joined<Left, Right>

    var base: Query<Left>
    let isLeft: Bool
    let condition: SQLFragment
    package var filters: [SQLFragment] = []
    var orderings: [SQLFragment] = []

    /// Keeps pairs where `predicate` is true.
    public func filter<E: TypedExpression>(
        _ predicate: (JoinedColumns<Left, Scope>, JoinedColumns<Right, Scope>) -> E
    ) -> JoinQuery where E.Root == Scope, E.Value == Bool {
        var query = self
        query.filters.append(predicate(JoinedColumns(), JoinedColumns()).sqlFragment)
        return query
    }

    /// Sorts by terms over either table, after any previous ordering.
    public func order(
        _ orderings: (JoinedColumns<Left, Scope>, JoinedColumns<Right, Scope>) -> [Ordering<Scope>]
    ) -> JoinQuery {
        var query = self
        query.orderings += orderings(JoinedColumns(), JoinedColumns()).map(\.sqlFragment)
        return query
    }

    /// Returns at most `limit` pairs, skipping the first `offset`.
    public func limit(_ limit: Int, offset: Int? = nil) -> JoinQuery {
        var query = self
        query.base = base.limit(limit, offset: offset)
        return query
    }

    var selectFragment: SQLFragment {
        func columns<T: TableRecord>(_ table: T.Type) -> [SQLFragment] {
            T.columnDefinitions.map { $0.selection(table: T.tableName) }
        }
        var query = base
        query.filters += filters
        query.orderings += orderings
        let from =
            query.source + SQLFragment(raw: isLeft ? " LEFT JOIN " : " JOIN ") + Query<Right>.table
            + SQLFragment(raw: " ON ") + condition
        return SQLFragment(raw: "SELECT ") + SQLFragment.join(columns(Left.self) + columns(Right.self), separator: ", ")
            + query.tail(from: from)
    }

    /// The SQL and arguments this join runs, with every column qualified by its table.
    public func build() throws -> (sql: String, arguments: StatementArguments) {
        try selectFragment.render(.init(qualifyColumns: true))
    }

    func fetchPairs(_ db: Connection, right: (StatementDecoder) throws -> RightValue) throws -> [(Left, RightValue)] {
        var pairs: [(Left, RightValue)] = []
        try forEachPair(db, right: right) { left, right, _ in pairs.append((left, right)) }
        return pairs
    }

    /// Calls `body` with each pair this join fetches, and the statement positioned on its row (`Left`'s
    /// columns first, in ``TableRecord/columnDefinitions`` order, then `Right`'s).
    func forEachPair(
        _ db: Connection, right: (StatementDecoder) throws -> RightValue, _ body: (Left, RightValue, Statement) throws -> Void
    ) throws {
        let (sql, arguments) = try build()
        try db.withStatement(sql: sql, arguments: arguments) { statement in
            let leftNames = Left.columnDefinitions.map(\.name)
            let leftDecoder = StatementDecoder(statement: statement, names: leftNames)
            let rightDecoder = StatementDecoder(
                statement: statement, names: Right.columnDefinitions.map(\.name), base: leftNames.count)
            while try statement.step() { try body(try leftDecoder.record(Left.self), try right(rightDecoder), statement) }
        }
    }
}

extension JoinQuery where RightValue == Right {
    /// Every matching pair.
    public func fetchAll(_ db: Connection) throws -> [(Left, Right)] {
        try fetchPairs(db) { try $0.record(Right.self) }
    }
}

extension JoinQuery where RightValue == Right? {
    /// Every left record, with its match or nil.
    public func fetchAll(_ db: Connection) throws -> [(Left, Right?)] {
        try fetchPairs(db) { $0.isAllNull ? nil : try $0.record(Right.self) }
    }
}

extension Query {
    /// Joins `right`, keeping pairs where `condition` is true; this query's filters and order still apply.
    public func join<Right: TableRecord, E: TypedExpression>(
        _ right: Right.Type,
        on condition: (JoinedColumns<Root, Joined<Root, Right>>, JoinedColumns<Right, Joined<Root, Right>>) -> E
    ) -> JoinQuery<Root, Right, Right> where E.Root == Joined<Root, Right>, E.Value == Bool {
        JoinQuery(base: self, isLeft: false, condition: condition(JoinedColumns(), JoinedColumns()).sqlFragment)
    }

    /// Left-joins `right`: every row of this query, with its match or nil.
    public func leftJoin<Right: TableRecord, E: TypedExpression>(
        _ right: Right.Type,
        on condition: (JoinedColumns<Root, Joined<Root, Right>>, JoinedColumns<Right, Joined<Root, Right>>) -> E
    ) -> JoinQuery<Root, Right, Right?> where E.Root == Joined<Root, Right>, E.Value == Bool {
        JoinQuery(base: self, isLeft: true, condition: condition(JoinedColumns(), JoinedColumns()).sqlFragment)
    }
}

extension TableRecord {
    /// Joins `right` to every row of the table (see ``Query/join(_:on:)``).
    public static func join<Right: TableRecord, E: TypedExpression>(
        _ right: Right.Type,
        on condition: (JoinedColumns<Self, Joined<Self, Right>>, JoinedColumns<Right, Joined<Self, Right>>) -> E
    ) -> JoinQuery<Self, Right, Right> where E.Root == Joined<Self, Right>, E.Value == Bool {
        Query().join(right, on: condition)
    }

    /// Left-joins `right` to every row of the table (see ``Query/leftJoin(_:on:)``).
    public static func leftJoin<Right: TableRecord, E: TypedExpression>(
        _ right: Right.Type,
        on condition: (JoinedColumns<Self, Joined<Self, Right>>, JoinedColumns<Right, Joined<Self, Right>>) -> E
    ) -> JoinQuery<Self, Right, Right?> where E.Root == Joined<Self, Right>, E.Value == Bool {
        Query().leftJoin(right, on: condition)
    }
}
