import CofferEngine

/// A query that selects expressions rather than whole records: produced by `select`.
///
/// With one typed expression it fetches values of that type; with a list, ``Row``s.
///
/// ```swift
/// let total = try Order.filter { $0.customerID == id }.select { $0.amount.total() }.fetchOne(db)
/// ```
public struct SelectQuery<Root: TableRecord, Value>: Sendable {
    let query: Query<Root>
    let selection: [SQLFragment]

    /// `SELECT <selection> FROM …`.
    var selectFragment: SQLFragment {
        SQLFragment(raw: "SELECT ") + SQLFragment.join(selection, separator: ", ") + query.tail(from: query.source)
    }

    /// The SQL and arguments this query runs, for logs and tests.
    public func build() throws -> (sql: String, arguments: StatementArguments) { try selectFragment.render() }

    /// Returns at most `limit` rows, skipping the first `offset`.
    public func limit(_ limit: Int, offset: Int? = nil) -> SelectQuery {
        SelectQuery(query: query.limit(limit, offset: offset), selection: selection)
    }
}

extension SelectQuery where Value: Decodable {
    /// The selected value of every row. A NULL in a non-optional type throws.
    public func fetchAll(_ db: Connection) throws -> [Value] {
        let (sql, arguments) = try selectFragment.render()
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            var values: [Value] = []
            // A reader per row: it reads the value the row holds once the statement is on it.
            while try statement.step() { values.append(try ColumnReader(statement: statement, column: 0).decode(Value.self)) }
            return values
        }
    }

    /// The selected value of the first row; nil when there is no row or the value is NULL (an aggregate
    /// over no rows).
    public func fetchOne(_ db: Connection) throws -> Value? {
        let (sql, arguments) = try selectFragment.render()
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            guard try statement.step(), !statement.isNull(at: 0) else { return nil }
            return try ColumnReader(statement: statement, column: 0).decode(Value.self)
        }
    }
}

extension SelectQuery where Value == Row {
    /// Every row, each a copy of its selected columns.
    public func fetchAll(_ db: Connection) throws -> [Row] {
        let (sql, arguments) = try selectFragment.render()
        return try db.fetchAll(sql: sql, arguments: arguments)
    }

    /// The first row, or nil.
    public func fetchOne(_ db: Connection) throws -> Row? {
        let (sql, arguments) = try selectFragment.render()
        return try db.fetchOne(sql: sql, arguments: arguments)
    }
}
