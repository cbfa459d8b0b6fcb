extension TableRecord {
    /// `CREATE TABLE "name" (…)` for the declared columns and constraints, under `name` (the table's own
    /// name, or a temporary one when a migration rebuilds it).
    static func createTableSQL(named name: String? = nil) throws -> String {
        var parts = try columnDefinitions.map { try $0.sql(withoutRowID: withoutRowID) }
        parts += try constraints.map { try $0.sql() }
        var sql = "CREATE TABLE " + (try SQLIdentifier.validated(name ?? tableName)) + " (" + parts.joined(separator: ", ") + ")"
        if withoutRowID { sql += " WITHOUT ROWID" }
        return sql
    }
}

/// What ``Connection/upgradeSchema(for:)`` did, table by table.
public struct SchemaUpgradeReport: Sendable, Equatable {
    /// Tables created.
    public var createdTables: [String] = []
    /// Columns added, as `table.column`.
    public var addedColumns: [String] = []
    /// Indexes created.
    public var createdIndexes: [String] = []
    /// Undeclared indexes dropped.
    public var droppedIndexes: [String] = []
    /// Columns in the file that no type declares, as `table.column` (left in place, and logged).
    public var undeclaredColumns: [String] = []
    /// Full-text indexes created (or recreated after their declaration changed) and filled.
    public var createdFullTextIndexes: [String] = []
}
