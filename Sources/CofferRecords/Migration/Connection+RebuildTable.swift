import CofferEngine

extension Connection {
    /// Rebuilds a table to match its type: the "create new table, copy, swap" procedure SQLite 3.15
    /// needs to drop, rename or retype a column or change a constraint.
    ///
    /// In one savepoint: creates the declared table under a temporary name, copies every column the old
    /// and new tables share (plus `renamedColumns`: new column → old column name), drops the old table,
    /// renames the new one and creates the declared indexes. Columns of the old table that the type no
    /// longer declares are dropped with it.
    ///
    /// ```swift
    /// migrator.register("v3: rename message.text to body") { db in
    ///     try db.rebuildTable(Message.self, renamedColumns: [(Message.columns.body, from: "text")])
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - table: the type whose declaration the table should match.
    ///   - oldName: the current table name, when the type's name changed (defaults to the type's).
    ///   - renamedColumns: columns whose data comes from a column of another name.
    /// - Important: run it inside a ``Migrator`` migration, which switches foreign key enforcement off
    ///   around the transaction and checks for violations before commit (SQLite's own advice for this
    ///   procedure): with enforcement on, dropping a parent table would fire its children's ON DELETE.
    public func rebuildTable<Table: TableRecord>(
        _ table: Table.Type, from oldName: String? = nil,
        renamedColumns: [(column: any SQLColumn<Table>, from: String)] = []
    ) throws {
        let source = oldName ?? Table.tableName
        let temporary = Table.tableName + "_coffer_rebuild"
        let oldColumns = Set(try columnNames(of: source).map { $0.lowercased() })
        guard !oldColumns.isEmpty else {
            throw CofferError(code: .apiMisuse, message: "no table named \(source) to rebuild")
        }
        var sourceByColumn: [String: String] = [:]
        for column in Table.columnDefinitions where oldColumns.contains(column.name.lowercased()) {
            sourceByColumn[column.name] = column.name
        }
        for renamed in renamedColumns { sourceByColumn[renamed.column.name] = renamed.from }
        let copied = Table.columnDefinitions.map(\.name).filter { sourceByColumn[$0] != nil }
        try inSavepointOrTransaction {
            let newTable = try SQLIdentifier.validated(temporary)
            let oldTable = try SQLIdentifier.validated(source)
            try execute(sql: Table.createTableSQL(named: temporary))
            if !copied.isEmpty {
                let targets = try copied.map { try SQLIdentifier.validated($0) }.joined(separator: ", ")
                let sources = try copied.map { try SQLIdentifier.validated(sourceByColumn[$0] ?? $0) }.joined(separator: ", ")
                try execute(sql: "INSERT INTO \(newTable) (\(targets)) SELECT \(sources) FROM \(oldTable)")
            }
            try execute(sql: "DROP TABLE \(oldTable)")
            try execute(sql: "ALTER TABLE \(newTable) RENAME TO \(try SQLIdentifier.validated(Table.tableName))")
            for index in Table.indexes { try execute(sql: try index.createSQL) }
        }
    }
}
