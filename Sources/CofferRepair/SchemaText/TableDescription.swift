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
    /// For a rowid table inferred from table B-tree pages (`recovered_*`): its column 0, `id INTEGER PRIMARY
    /// KEY`, holds each row's rowid and the record's fields are the columns after it; nil for every other
    /// table.
    var recoveredRowid: RecoveredRowid? = nil

    /// The declaration-order column index of each record field: the PRIMARY KEY columns first for a WITHOUT
    /// ROWID table, every column but `id` for a recovered rowid table.
    public var recordFieldColumns: [Int] {
        if recoveredRowid != nil { return Array(columns.indices.dropFirst()) }
        guard withoutRowid else { return Array(columns.indices) }
        return primaryKeyColumns + columns.indices.filter { !primaryKeyColumns.contains($0) }
    }

    /// The most fields a record of the table holds.
    var recordWidth: Int { recoveredRowid == nil ? columns.count : columns.count - 1 }
}

/// How a recovered rowid table's first field relates to the rowid (see ``TableDescription``).
enum RecoveredRowid: String, Sendable, Codable {
    /// The fields are kept as stored: `id` is the only copy of the rowid.
    case besideRecord
    /// The first field was NULL in every record the table was inferred from: the tree's INTEGER PRIMARY KEY
    /// alias (SQLite stores NULL there), which reads the rowid, as in the original table.
    case firstFieldIsAlias
}
