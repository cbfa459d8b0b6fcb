// TableDescription — a table of a damaged file's schema (read from sqlite_master, or inferred), to salvage into.

/// A table to salvage into.
public struct TableDescription: Sendable, Codable, Equatable {
    /// Table name.
    public var name: String
    /// Root page of its B-tree (0 for an inferred table).
    public var rootPage: UInt32
    /// The original CREATE TABLE sql, or a generated one for inferred tables.
    public var sql: String
    /// Columns in declaration order.
    var columns: [ColumnDescription]
    /// The INTEGER PRIMARY KEY column, if any.
    public var rowidAliasColumn: Int?
    /// Whether the table is WITHOUT ROWID (an index B-tree whose records are the rows).
    public var withoutRowid: Bool
    /// PRIMARY KEY column indexes in key order (the record order of a WITHOUT ROWID table starts with these).
    public var primaryKeyColumns: [Int]
    /// Whether the table was inferred from orphan records rather than read from sqlite_master.
    public var isInferred: Bool
    /// The virtual table this table is a shadow table of, when the library has its module (the writer then
    /// recreates the virtual table and fills this shadow table inside it).
    var virtualTable: VirtualTableDescription? = nil

    /// For a WITHOUT ROWID table: the declaration-order column index of each record field.
    public var recordFieldColumns: [Int] {
        guard withoutRowid else { return Array(columns.indices) }
        return primaryKeyColumns + columns.indices.filter { !primaryKeyColumns.contains($0) }
    }
}
