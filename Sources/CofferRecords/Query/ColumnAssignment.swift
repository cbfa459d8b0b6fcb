import CofferEngine

/// `column = value` in an UPDATE: built with ``TableColumn/set(to:)-…``.
///
/// ```swift
/// try Player.filter { $0.id == id }.updateAll(db) { [$0.score.set(to: $0.score + 1), $0.name.set(to: "Ann")] }
/// ```
public struct ColumnAssignment<Root: TableRecord>: Sendable {
    let columnName: String
    let value: SQLFragment
}

extension TableColumn {
    /// Assigns a value (bound).
    public func set(to value: Value) -> ColumnAssignment<Root> where Value: Encodable {
        ColumnAssignment(columnName: name, value: .encoding(value))
    }

    /// Assigns an expression over the row's columns, such as `$0.score + 1`.
    public func set<E: TypedExpression>(to expression: E) -> ColumnAssignment<Root>
    where E.Root == Root, E.Value == Value {
        ColumnAssignment(columnName: name, value: expression.sqlFragment)
    }
}

extension Query {
    /// Updates every matching row; returns the number of rows changed.
    public func updateAll(_ db: Connection, _ assignments: (Root.Columns) -> [ColumnAssignment<Root>]) throws -> Int {
        try requireWholeRows("updateAll")
        let list = assignments(Root.columns)
        guard !list.isEmpty else { return 0 }
        let migration = try moveRowsForLiveMigration(db)
        let (sql, arguments) = try updateFragment(list, table: migration?.writeTable).render()
        try db.execute(sql: sql, arguments: arguments)
        return db.changesCount
    }

    /// Deletes every matching row; returns the number of rows deleted.
    @discardableResult
    public func deleteAll(_ db: Connection) throws -> Int {
        try requireWholeRows("deleteAll")
        let migration = try moveRowsForLiveMigration(db)
        let (sql, arguments) = try deleteFragment(table: migration?.writeTable).render()
        try db.execute(sql: sql, arguments: arguments)
        return db.changesCount
    }

    /// While a live migration fills the table: moves the source rows the filters pick into `main."T"`
    /// (the statement then runs there), and returns the migration. A query driven by a row source (a
    /// full-text index's hits) moves nothing: it picks rows by their rowids in `main."T"`, and the index
    /// holds no source row still to move.
    func moveRowsForLiveMigration(_ db: Connection) throws -> LiveMigrationTable? {
        guard let migration = db.liveMigration(of: Root.tableName) else { return nil }
        guard rowSource == nil else { return migration }
        let (condition, arguments) = try (filters.isEmpty ? SQLFragment(raw: "1") : Self.conjunction(filters)).render()
        try migration.moveRows(where: condition, arguments: arguments.values, db)
        return migration
    }
}

extension TableRecord {
    /// Updates every row of the table; returns the number of rows changed.
    public static func updateAll(_ db: Connection, _ assignments: (Columns) -> [ColumnAssignment<Self>]) throws -> Int {
        try Query<Self>().updateAll(db, assignments)
    }

    /// Deletes every row of the table; returns the number of rows deleted.
    @discardableResult
    public static func deleteAll(_ db: Connection) throws -> Int { try Query<Self>().deleteAll(db) }
}
