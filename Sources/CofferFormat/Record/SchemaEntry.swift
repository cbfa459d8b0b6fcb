// SchemaEntry — one row of sqlite_master (type, name, tbl_name, rootpage, sql), the one form every layer
// uses: Coffer's backup repair material stores it, the repair engine reads it from page 1 (or from that
// material when page 1 is gone).

/// The kind of a schema entry (sqlite_master's `type` column).
public enum SchemaEntryKind: String, Sendable, Codable, Hashable {
    /// A table.
    case table
    /// An index.
    case index
    /// A view.
    case view
    /// A trigger.
    case trigger
}

/// One row of sqlite_master.
///
/// ```swift
/// let entry = SchemaEntry(kind: .index, name: "item_n", tableName: "item", rootPage: 3, sql: nil)
/// ```
///
/// Its JSON keys are `type`, `name`, `tableName`, `rootPage` and `sql` (the form repair material has
/// always stored).
public struct SchemaEntry: Sendable, Codable, Hashable {
    /// Its kind.
    public var kind: SchemaEntryKind
    /// Its name.
    public var name: String
    /// The table it belongs to.
    public var tableName: String
    /// Its root page (0 for views, triggers and virtual tables).
    public var rootPage: UInt32
    /// Its `CREATE` statement (nil for automatic indexes).
    public var sql: String?

    /// Creates an entry (as read from sqlite_master, or from backup repair material).
    public init(kind: SchemaEntryKind, name: String, tableName: String, rootPage: UInt32, sql: String?) {
        self.kind = kind
        self.name = name
        self.tableName = tableName
        self.rootPage = rootPage
        self.sql = sql
    }

    enum CodingKeys: String, CodingKey {
        case kind = "type"
        case name, tableName, rootPage, sql
    }
}
