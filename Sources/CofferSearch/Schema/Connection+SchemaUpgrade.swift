import CofferEngine
import CofferRecords

extension Connection {
    /// Brings the file's schema up to the declared tables, in one transaction (a savepoint when a
    /// transaction is already open, as in `write`):
    ///
    /// - a missing table is created with its columns, constraints and indexes;
    /// - a property added to a type becomes a column (`ALTER TABLE ADD COLUMN`; a new non-optional
    ///   property needs a `@Column(default:)`, since existing rows need a value);
    /// - declared indexes are created and indexes no type declares are dropped (SQLite's automatic
    ///   indexes for UNIQUE and PRIMARY KEY are left alone);
    /// - columns in the file but not in the type are left in place and reported through the logger.
    ///
    /// Changes that SQLite 3.15 cannot make in place (dropping, renaming or retyping a column, adding a
    /// constraint) belong in a ``Migrator`` migration, with ``Connection/rebuildTable(_:from:renamedColumns:)``.
    ///
    /// ```swift
    /// try database.write { db in try db.upgradeSchema(for: [Conversation.self, Message.self]) }
    /// ```
    @discardableResult
    public func upgradeSchema(for tables: [any TableRecord.Type]) throws -> SchemaUpgradeReport {
        var report = SchemaUpgradeReport()
        try inSavepointOrTransaction {
            for table in tables { try upgrade(table, &report) }
        }
        for column in report.undeclaredColumns {
            logger.warning("column is in the database but not in its type; left in place", metadata: ["column": "\(column)"])
        }
        return report
    }

    private func upgrade<Table: TableRecord>(_ table: Table.Type, _ report: inout SchemaUpgradeReport) throws {
        let name = Table.tableName
        let existing = try columnNames(of: name)
        if existing.isEmpty {
            try execute(sql: Table.createTableSQL())
            report.createdTables.append(name)
        } else {
            let lowered = Set(existing.map { $0.lowercased() })
            for column in Table.columnDefinitions where !lowered.contains(column.name.lowercased()) {
                if !column.isOptional && column.defaultValue == nil {
                    throw CofferError(
                        code: .apiMisuse,
                        message: "cannot add NOT NULL column \(name).\(column.name) without a default: "
                            + "declare @Column(default:) or make it optional")
                }
                try execute(
                    sql: "ALTER TABLE " + (try SQLIdentifier.validated(name)) + " ADD COLUMN "
                        + (try column.sql(withoutRowID: false)))
                report.addedColumns.append("\(name).\(column.name)")
            }
            let declared = Set(Table.columnDefinitions.map { $0.name.lowercased() })
            report.undeclaredColumns += existing.filter { !declared.contains($0.lowercased()) }.map { "\(name).\($0)" }
        }
        try upgradeIndexes(of: Table.self, &report)
        if let created = try upgradeFullTextIndex(of: Table.self) { report.createdFullTextIndexes.append(created) }
    }

    private func upgradeIndexes<Table: TableRecord>(of table: Table.Type, _ report: inout SchemaUpgradeReport) throws {
        // Explicitly created indexes have SQL in sqlite_master; automatic ones (sqlite_autoindex_…) have NULL.
        let current = try fetchAll(
            sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL",
            arguments: [Table.tableName])
        var currentSQL: [String: String] = [:]
        for row in current {
            if let name: String = row["name"], let sql: String = row["sql"] { currentSQL[name] = sql }
        }
        let declared = Table.indexes
        let declaredSQL = try Dictionary(declared.map { ($0.name, try $0.createSQL) }, uniquingKeysWith: { first, _ in first })
        for (name, sql) in currentSQL where declaredSQL[name] != sql {
            try execute(sql: "DROP INDEX " + (try SQLIdentifier.validated(name)))
            report.droppedIndexes.append(name)
        }
        for index in declared where currentSQL[index.name] != declaredSQL[index.name] {
            try execute(sql: try index.createSQL)
            report.createdIndexes.append(index.name)
        }
    }
}
