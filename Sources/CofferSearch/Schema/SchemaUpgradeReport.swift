import CofferEngine
import CofferRecords

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
