import CofferEngine

// Writes that return the rows they wrote, through SQLite's RETURNING (3.35, SQLCipher 4.5 and later) and
// native UPSERT (3.24). On a library without them each call throws `unsupportedByLibrary` before any SQL
// runs; the portable `insert`, `upsert`, `updateAll` and `deleteAll` work on every library.

extension TableRecord {
    /// Inserts the record and returns the row as stored — its assigned key, column defaults and whatever a
    /// trigger changed — read by the INSERT itself (`INSERT … RETURNING`). Nil when `.ignore` skipped it.
    ///
    /// Needs ``SQLiteFeature/returning`` (SQLCipher 4.5 and later); on SQLCipher 3.4.1 it throws
    /// ``ResultCode/unsupportedByLibrary``: use ``insert(_:onConflict:)`` there.
    ///
    /// ```swift
    /// let stored = try Player(id: nil, name: "Ann", score: 0).insertAndFetch(db)
    /// ```
    public func insertAndFetch(_ db: Connection, onConflict resolution: ConflictResolution = .abort) throws -> Self? {
        try LinkedSQLite.require(.returning, for: "insertAndFetch")
        let values = try columnValues()
        let migration = db.liveMigration(of: Self.tableName)
        if let migration { try Self.moveConflictingRows(values, migration, db) }
        let sql = try Self.insertSQL(resolution, into: migration?.writeTable) + (try Self.returningClause())
        return try db.withStatement(sql: sql, arguments: StatementArguments(values)) { statement in
            try StatementDecoder.fetchOne(Self.self, from: statement)
        }
    }

    /// Inserts the record or, when a row with the same values in `conflictColumns` exists, updates that row,
    /// in one statement (`INSERT … ON CONFLICT (…) DO UPDATE … RETURNING`), and returns the row as stored.
    ///
    /// The conflict target defaults to the primary key and must be a key (the primary key, UNIQUE columns or
    /// a unique index), as SQLite requires. `doUpdate` says what a conflict changes, reading the existing
    /// row's columns as `$0.score` and the proposed ones as `$0.score.excluded`; by default every column
    /// outside the target and the primary key takes the proposed value, as ``upsert(_:onConflict:)`` does.
    ///
    /// Needs ``SQLiteFeature/returning`` (SQLCipher 4.5 and later); on SQLCipher 3.4.1 it throws
    /// ``ResultCode/unsupportedByLibrary``: ``upsert(_:onConflict:)`` works on both.
    ///
    /// ```swift
    /// // Count a visit: insert the first, add one to an existing row.
    /// let visit = try Visit(page: "/home", count: 1).upsertAndFetch(db, onConflict: { [$0.page] }) {
    ///     [$0.count.set(to: $0.count + $0.count.excluded)]
    /// }
    /// ```
    public func upsertAndFetch(
        _ db: Connection, onConflict conflictColumns: ((Columns) -> [any SQLColumn<Self>])? = nil,
        doUpdate assignments: ((Columns) -> [ColumnAssignment<Self>])? = nil
    ) throws -> Self {
        try LinkedSQLite.require(.returning, for: "upsertAndFetch")
        let target = conflictColumns.map { $0(Self.columns).map(\.name) } ?? Self.primaryKeyColumnNames
        guard !target.isEmpty, Self.uniqueKeys.contains(Set(target)) else {
            throw CofferError(
                code: .apiMisuse,
                message: "upsertAndFetch on \(Self.tableName) needs a primary key or UNIQUE columns as its conflict target")
        }
        let values = try columnValues()
        let migration = db.liveMigration(of: Self.tableName)
        if let migration { try Self.moveConflictingRows(values, migration, db) }
        let excluded = { (name: String) in
            SQLFragment([.identifier(name)]) + SQLFragment(raw: " = excluded.") + SQLFragment([.identifier(name)])
        }
        var sets = (assignments?(Self.columns) ?? []).map {
            SQLFragment([.identifier($0.columnName)]) + SQLFragment(raw: " = ")
                + Self.compressing($0.value, forColumn: $0.columnName)
        }
        if assignments == nil {
            let keys = Set(target).union(Self.primaryKeyColumnNames)
            // `excluded."c"` is the value the INSERT proposed, compressed already where the column is.
            sets = Self.columnDefinitions.map(\.name).filter { !keys.contains($0) }.map(excluded)
        }
        if sets.isEmpty {
            // Nothing to change: a no-op assignment still makes RETURNING give the existing row.
            sets = [excluded(target[0])]
        }
        let targetList = try target.map { try SQLIdentifier.validated($0) }.joined(separator: ", ")
        let (update, updateArguments) = try SQLFragment.join(sets, separator: ", ").render()
        let sql =
            try Self.insertSQL(.abort, into: migration?.writeTable) + " ON CONFLICT (" + targetList + ") DO UPDATE SET "
            + update + (try Self.returningClause())
        let row = try db.withStatement(sql: sql, arguments: StatementArguments(values + updateArguments.values)) {
            try StatementDecoder.fetchOne(Self.self, from: $0)
        }
        guard let row else {
            throw CofferError(code: .error, message: "upsertAndFetch on \(Self.tableName) returned no row", sql: sql)
        }
        return row
    }

    /// ` RETURNING "a", coffer_decompress("b"), …`: the record's columns as a fetch reads them.
    static func returningClause() throws -> String {
        " RETURNING " + (try Query<Self>.recordSelection.render().sql)
    }
}

extension Query {
    /// Deletes every matching row and returns the rows deleted (`DELETE … RETURNING`), in no set order.
    ///
    /// Needs ``SQLiteFeature/returning`` (SQLCipher 4.5 and later); on SQLCipher 3.4.1 it throws
    /// ``ResultCode/unsupportedByLibrary``: fetch, then ``deleteAll(_:)``, in one write there.
    ///
    /// ```swift
    /// let expired = try Session.filter { $0.expiresAt < now }.deleteAndFetchAll(db)
    /// ```
    public func deleteAndFetchAll(_ db: Connection) throws -> [Root] {
        try LinkedSQLite.require(.returning, for: "deleteAndFetchAll")
        try requireWholeRows("deleteAndFetchAll")
        let migration = try moveRowsForLiveMigration(db)
        let (sql, arguments) = try (deleteFragment(table: migration?.writeTable) + Self.returning).render()
        return try db.withStatement(sql: sql, arguments: arguments) { try StatementDecoder.fetchAll(Root.self, from: $0) }
    }

    /// Updates every matching row and returns the rows as updated (`UPDATE … RETURNING`), in no set order.
    ///
    /// Needs ``SQLiteFeature/returning`` (SQLCipher 4.5 and later); on SQLCipher 3.4.1 it throws
    /// ``ResultCode/unsupportedByLibrary``: use ``updateAll(_:_:)`` there.
    ///
    /// ```swift
    /// let promoted = try Player.filter { $0.score > 100 }.updateAndFetchAll(db) { [$0.level.set(to: $0.level + 1)] }
    /// ```
    public func updateAndFetchAll(
        _ db: Connection, _ assignments: (Root.Columns) -> [ColumnAssignment<Root>]
    ) throws -> [Root] {
        try LinkedSQLite.require(.returning, for: "updateAndFetchAll")
        try requireWholeRows("updateAndFetchAll")
        let list = assignments(Root.columns)
        guard !list.isEmpty else { return try fetchAll(db) }
        let migration = try moveRowsForLiveMigration(db)
        let (sql, arguments) = try (updateFragment(list, table: migration?.writeTable) + Self.returning).render()
        return try db.withStatement(sql: sql, arguments: arguments) { try StatementDecoder.fetchAll(Root.self, from: $0) }
    }

    private static var returning: SQLFragment { SQLFragment(raw: " RETURNING ") + recordSelection }
}

extension TableColumn {
    /// In ``TableRecord/upsertAndFetch(_:onConflict:doUpdate:)``'s `doUpdate`: the value the INSERT proposed
    /// for this column (SQLite's `excluded."column"`), where `$0.column` alone is the existing row's.
    public var excluded: SQLExpression<Root, Value> {
        let column = SQLFragment(raw: "excluded.") + SQLFragment([.identifier(name)])
        return SQLExpression(isCompressed ? .decompressed(column) : column)
    }
}
