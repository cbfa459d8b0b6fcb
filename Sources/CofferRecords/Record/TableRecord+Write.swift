import CofferEngine

/// How an INSERT resolves a conflict with a UNIQUE or PRIMARY KEY constraint.
public enum ConflictResolution: String, Sendable {
    /// Fail with ``CofferError/constraint`` (the default).
    case abort = "INSERT"
    /// Delete the conflicting rows, then insert.
    case replace = "INSERT OR REPLACE"
    /// Skip the row.
    case ignore = "INSERT OR IGNORE"

    /// Which of a record type's kept statements inserts with this resolution.
    var statementPurpose: Int {
        switch self {
        case .abort: return 0
        case .replace: return 1
        case .ignore: return 2
        }
    }
}

/// Which of a record type's kept statements updates by primary key (after the three inserts).
private let updateStatementPurpose = 3

/// Added to a purpose for the statement that writes `main."T"` while a live migration's union view hides
/// `T` (see ``LiveMigrationTable``).
private let migratingStatementPurposeOffset = 4

extension TableRecord {
    /// The primary key's column names: a `@Column(primaryKey:)` column or a `.primaryKey` constraint.
    static var primaryKeyColumnNames: [String] {
        let single = columnDefinitions.filter(\.isPrimaryKey).map(\.name)
        return single.isEmpty ? constraints.flatMap(\.primaryKeyColumnNames) : single
    }

    /// The rowid under a column's own name: the one primary-key column of a rowid table, declared
    /// `INTEGER` (SQLite's `INTEGER PRIMARY KEY`, by a column or a table constraint); nil for any other
    /// table.
    static var integerPrimaryKeyColumn: String? {
        guard !withoutRowID, case let keys = primaryKeyColumnNames, keys.count == 1,
            let column = columnDefinitions.first(where: { $0.name == keys[0] }),
            column.affinity.uppercased() == "INTEGER"
        else { return nil }
        return column.name
    }

    /// The column sets that identify at most one row: the primary key, UNIQUE columns and constraints,
    /// unique indexes.
    static var uniqueKeys: Set<Set<String>> {
        var keys: Set<Set<String>> = [Set(primaryKeyColumnNames)]
        for column in columnDefinitions where column.isUnique { keys.insert([column.name]) }
        for constraint in constraints where !constraint.uniqueColumnNames.isEmpty {
            keys.insert(Set(constraint.uniqueColumnNames))
        }
        for index in indexes where index.isUnique { keys.insert(Set(index.columnNames)) }
        return keys.filter { !$0.isEmpty }
    }

    /// The INSERT of a record's columns. With `compressedAhead`, compressed columns take their stored
    /// form as bound (``insertCompressingAhead(_:_:_:_:)`` compressed it), not through `coffer_compress`.
    static func insertSQL(
        _ resolution: ConflictResolution, into table: String? = nil, compressedAhead: Bool = false
    ) throws -> String {
        let names = try columnDefinitions.map { try SQLIdentifier.validated($0.name) }
        // Compressed columns bind through coffer_compress, whose dictionary may read another column's
        // parameter: then every parameter is numbered.
        let values =
            hasCompressedColumns && !compressedAhead
            ? try columnDefinitions.enumerated().map { try writtenValueSQL($0.element, parameter: $0.offset + 1) }
            : Array(repeating: "?", count: names.count)
        return resolution.rawValue + " INTO " + (try table ?? SQLIdentifier.validated(tableName)) + " ("
            + names.joined(separator: ", ") + ") VALUES (" + values.joined(separator: ", ") + ")"
    }

    /// Inserts the record. A nil integer primary key is assigned by SQLite and written back.
    ///
    /// ```swift
    /// var player = Player(id: nil, name: "Ann", score: 0)
    /// try player.insert(db)            // player.id is set
    /// try player.insert(db, onConflict: .ignore)
    /// ```
    public mutating func insert(_ db: Connection, onConflict resolution: ConflictResolution = .abort) throws {
        if let migration = db.liveMigration(of: Self.tableName) {
            let values = try columnValues()
            try Self.moveConflictingRows(values, migration, db)
            let statement = try Self.insertStatement(db, resolution, migration)
            defer {
                statement.reset()
                statement.isInUse = false
            }
            try statement.execute(StatementArguments(values))
            if db.changesCount > 0 { didInsert(rowID: db.lastInsertedRowID) }
            return
        }
        let statement = try Self.insertStatement(db, resolution)
        defer { statement.isInUse = false }
        try statement.execute(binding: self)
        if db.changesCount > 0 { didInsert(rowID: db.lastInsertedRowID) }
    }

    /// The connection's INSERT statement for this type and `resolution`, marked in use: its SQL is
    /// rendered once per connection, and found again without building or hashing it. While a live
    /// migration fills the table, the statement writes `main."T"` (the name alone is the union view).
    private static func insertStatement(
        _ db: Connection, _ resolution: ConflictResolution, _ migration: LiveMigrationTable? = nil
    ) throws -> Statement {
        guard let migration else {
            return try db.recordStatement(for: Self.self, purpose: resolution.statementPurpose) { try insertSQL(resolution) }
        }
        return try db.recordStatement(for: Self.self, purpose: resolution.statementPurpose + migratingStatementPurposeOffset) {
            try insertSQL(resolution, into: migration.writeTable)
        }
    }

    /// Before inserting `values` into a table a live migration fills: moves the source rows that share a
    /// primary key or UNIQUE value with them, so that the insert conflicts (or replaces, or is ignored)
    /// exactly as it would if every source row were already there; and, when SQLite is to choose the
    /// integer key, keeps the key it chooses clear of the keys still to come.
    static func moveConflictingRows(
        _ values: [DatabaseValue], _ migration: LiveMigrationTable, _ db: Connection
    ) throws {
        let names = columnDefinitions.map(\.name)
        var terms: [String] = []
        var arguments: [DatabaseValue] = []
        for key in uniqueKeys.map({ $0.sorted() }).sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            let keyValues = Self.values(values, names, key)
            guard keyValues.count == key.count, !keyValues.contains(where: \.isNull) else { continue }
            terms.append("(" + (try matchSQL(key)) + ")")
            arguments += keyValues
        }
        if !terms.isEmpty { try migration.moveRows(where: terms.joined(separator: " OR "), arguments: arguments, db) }
        let key = primaryKeyColumnNames
        if key.count == 1, Self.values(values, names, key).first?.isNull == true { try migration.reserveIntegerKey(db) }
    }

    /// Inserts many records through one prepared statement, atomically (in a savepoint); returns the
    /// rowid of each (0 for a row that `.ignore` skipped).
    @discardableResult
    public static func insertAll(
        _ records: some Sequence<Self>, _ db: Connection, onConflict resolution: ConflictResolution = .abort
    ) throws -> [Int64] {
        try db.savepoint { try insertEach(records, db, resolution) }
    }

    /// `insertAll`'s loop, without its savepoint. Without hooks each record is bound by its
    /// ``TableRecord/bindColumns(to:then:)``; with them, each record's column values go to `willInsert`
    /// before its row is inserted, and with the row's rowid (0 when `.ignore` skipped it) to `didInsert`
    /// after.
    package static func insertEach(
        _ records: some Sequence<Self>, _ db: Connection, _ resolution: ConflictResolution,
        willInsert: (([DatabaseValue]) throws -> Void)? = nil,
        didInsert: ((_ rowID: Int64, _ values: [DatabaseValue]) -> Void)? = nil
    ) throws -> [Int64] {
        let migration = db.liveMigration(of: tableName)
        let hooked = willInsert != nil || didInsert != nil || migration != nil
        if !hooked, hasCompressedColumns, let ahead = db.compressionAhead() {
            return try insertCompressingAhead(records, db, resolution, ahead)
        }
        let statement = try insertStatement(db, resolution, migration)
        defer {
            statement.reset()
            statement.isInUse = false
        }
        var rowIDs: [Int64] = []
        for record in records {
            guard hooked else {
                try statement.execute(binding: record)
                rowIDs.append(db.changesCount > 0 ? db.lastInsertedRowID : 0)
                continue
            }
            let values = try record.columnValues()
            if let migration { try moveConflictingRows(values, migration, db) }
            try willInsert?(values)
            try statement.execute(StatementArguments(values))
            let rowID = db.changesCount > 0 ? db.lastInsertedRowID : 0
            didInsert?(rowID, values)
            rowIDs.append(rowID)
        }
        return rowIDs
    }

    /// Inserts the record, or — when a row with the same values in `conflictColumns` exists — updates
    /// that row's other columns. The default conflict target is the primary key; another target must be
    /// declared UNIQUE (a column, a constraint or a unique index), as SQLite's own upsert requires.
    ///
    /// SQLite 3.15 has no `ON CONFLICT DO UPDATE`, so this runs in a savepoint: an UPDATE of the row
    /// matching the target, then an INSERT when none matched. NULL target values never match, as in SQL
    /// (so a nil id always inserts). A conflict on another UNIQUE column still throws.
    ///
    /// ```swift
    /// var user = User(id: nil, email: "ann@example.com", name: "Ann")
    /// try user.upsert(db) { [$0.email] }     // user.id is the existing or the new row's id
    /// ```
    public mutating func upsert(
        _ db: Connection, onConflict conflictColumns: ((Columns) -> [any SQLColumn<Self>])? = nil
    ) throws {
        let target = conflictColumns.map { $0(Self.columns).map(\.name) } ?? Self.primaryKeyColumnNames
        // As with SQLite's own upsert, the target must be a key: otherwise the UPDATE could hit many rows.
        guard Self.uniqueKeys.contains(Set(target)) else {
            throw CofferError(
                code: .apiMisuse,
                message: "upsert on \(Self.tableName) needs a primary key or UNIQUE columns as its conflict target")
        }
        let values = try columnValues()
        let names = Self.columnDefinitions.map(\.name)
        let migration = db.liveMigration(of: Self.tableName)
        var record = self
        try db.savepoint {
            if let migration {
                // The row to update may still be in the source: move it first, then look in `main."T"`.
                let targetValues = Self.values(values, names, target)
                if !targetValues.contains(where: \.isNull) {
                    try migration.moveRows(where: try Self.matchSQL(target), arguments: targetValues, db)
                }
            }
            let table = try migration?.writeTable ?? SQLIdentifier.validated(Self.tableName)
            if try Self.updateMatching(values: values, names: names, target: target, table: table, db) {
                if !Self.withoutRowID,
                    let rowID = try db.fetchValue(
                        Int64.self, sql: try Self.rowIDSQL(target: target, table: table),
                        arguments: StatementArguments(Self.values(values, names, target)))
                {
                    record.didInsert(rowID: rowID)
                }
            } else {
                try record.insert(db)
            }
        }
        self = record
    }

    /// Updates the row whose `target` columns equal the record's; false when no row matched.
    private static func updateMatching(
        values: [DatabaseValue], names: [String], target: [String], table: String, _ db: Connection
    ) throws -> Bool {
        let targetValues = Self.values(values, names, target)
        if targetValues.contains(where: \.isNull) { return false }
        let keys = Set(target).union(primaryKeyColumnNames)
        let updated = names.filter { !keys.contains($0) }
        guard !updated.isEmpty else {
            // Nothing to update: the row exists or must be inserted.
            return try db.fetchValue(
                Int.self, sql: try existsSQL(target: target, table: table), arguments: StatementArguments(targetValues)) == 1
        }
        try db.execute(
            sql: try updateSQL(set: updated, target: target, table: table),
            arguments: StatementArguments(Self.values(values, names, updated) + targetValues))
        return db.changesCount > 0
    }

    /// Updates the row with the record's primary key; returns false when there is none.
    @discardableResult
    public func update(_ db: Connection) throws -> Bool {
        let key = Self.primaryKeyColumnNames
        guard !key.isEmpty else { throw CofferError(code: .apiMisuse, message: "\(Self.tableName) has no primary key") }
        let names = Self.columnDefinitions.map(\.name)
        let updated = names.filter { !key.contains($0) }
        guard !updated.isEmpty else { return false }
        let migration = db.liveMigration(of: Self.tableName)
        if let migration {
            // The row may still be in the source: move it, so that the update changes it in `main."T"`.
            try migration.moveRows(
                where: try Self.matchSQL(key), arguments: Self.values(try columnValues(), names, key), db)
        }
        let purpose = updateStatementPurpose + (migration == nil ? 0 : migratingStatementPurposeOffset)
        let statement = try db.recordStatement(for: Self.self, purpose: purpose) {
            try Self.updateByKeySQL(set: updated, key: key, table: migration?.writeTable)
        }
        defer { statement.isInUse = false }
        try statement.execute(binding: self)
        return db.changesCount > 0
    }

    /// Deletes the row with the record's primary key; returns false when there was none.
    @discardableResult
    public func delete(_ db: Connection) throws -> Bool {
        let key = Self.primaryKeyColumnNames
        guard !key.isEmpty else { throw CofferError(code: .apiMisuse, message: "\(Self.tableName) has no primary key") }
        let keyValues = Self.values(try columnValues(), Self.columnDefinitions.map(\.name), key)
        var table = try SQLIdentifier.validated(Self.tableName)
        if let migration = db.liveMigration(of: Self.tableName) {
            // A row still in the source is moved and then deleted: recorded as moved, it never comes back.
            try migration.moveRows(where: try Self.matchSQL(key), arguments: keyValues, db)
            table = migration.writeTable
        }
        let sql = "DELETE FROM " + table + " WHERE " + (try Self.matchSQL(key))
        try db.execute(sql: sql, arguments: StatementArguments(keyValues))
        return db.changesCount > 0
    }

    // MARK: SQL

    static func values(_ values: [DatabaseValue], _ names: [String], _ selected: [String]) -> [DatabaseValue] {
        selected.compactMap { name in names.firstIndex(of: name).map { values[$0] } }
    }

    static func matchSQL(_ columns: [String]) throws -> String {
        try columns.map { try SQLIdentifier.validated($0) + " = ?" }.joined(separator: " AND ")
    }

    /// `UPDATE … SET a = ?2, … WHERE id = ?1`: each column is parameter `n` for the `n`th column, so that
    /// the record's binder binds it in column order.
    static func updateByKeySQL(set columns: [String], key: [String], table: String? = nil) throws -> String {
        let names = columnDefinitions.map(\.name)
        func assignments(_ selected: [String], compressing: Bool) throws -> [String] {
            try selected.map { name in
                guard let index = names.firstIndex(of: name) else {
                    throw CofferError(code: .apiMisuse, message: "\(tableName) has no column '\(name)' for its primary key")
                }
                guard compressing else { return try SQLIdentifier.validated(name) + " = ?" + String(index + 1) }
                return try SQLIdentifier.validated(name) + " = "
                    + (try writtenValueSQL(columnDefinitions[index], parameter: index + 1))
            }
        }
        return "UPDATE " + (try table ?? SQLIdentifier.validated(tableName)) + " SET "
            + (try assignments(columns, compressing: true)).joined(separator: ", ") + " WHERE "
            + (try assignments(key, compressing: false)).joined(separator: " AND ")
    }

    static func updateSQL(set columns: [String], target: [String], table: String? = nil) throws -> String {
        let assignments = try columns.map { name in
            let value = try compressing(SQLFragment(raw: "?"), forColumn: name).render().sql
            return try SQLIdentifier.validated(name) + " = " + value
        }
        return "UPDATE " + (try table ?? SQLIdentifier.validated(tableName)) + " SET "
            + assignments.joined(separator: ", ")
            + " WHERE " + (try matchSQL(target))
    }

    static func rowIDSQL(target: [String], table: String? = nil) throws -> String {
        "SELECT rowid FROM " + (try table ?? SQLIdentifier.validated(tableName)) + " WHERE " + (try matchSQL(target))
    }

    static func existsSQL(target: [String], table: String? = nil) throws -> String {
        "SELECT EXISTS (SELECT 1 FROM " + (try table ?? SQLIdentifier.validated(tableName)) + " WHERE "
            + (try matchSQL(target)) + ")"
    }
}
