// TableColumns — what a table's CREATE TABLE statement declares, as SQLite itself reads it (see
// ``CreateStatementReader``): the columns (name, declared type, affinity by SQLite's rules, in order: type
// contains "INT" → INTEGER; "CHAR", "CLOB" or "TEXT" → TEXT; "BLOB" or no type → BLOB; "REAL", "FLOA" or
// "DOUB" → REAL; otherwise NUMERIC), the rowid alias (INTEGER PRIMARY KEY), WITHOUT ROWID and the PRIMARY
// KEY columns (the leading fields of each record of a WITHOUT ROWID table's B-tree, in key order).

/// Column affinity.
enum Affinity: String, Sendable, Codable {
    /// INTEGER affinity.
    case integer
    /// TEXT affinity.
    case text
    /// BLOB (none) affinity.
    case blob
    /// REAL affinity.
    case real
    /// NUMERIC affinity.
    case numeric

    /// The affinity SQLite gives a declared type.
    init(declaredType: String) {
        let type = declaredType.uppercased()
        if type.contains("INT") {
            self = .integer
        } else if type.contains("CHAR") || type.contains("CLOB") || type.contains("TEXT") {
            self = .text
        } else if type.contains("BLOB") || type.isEmpty {
            self = .blob
        } else if type.contains("REAL") || type.contains("FLOA") || type.contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }
}

/// One column of a table.
struct ColumnDescription: Sendable, Codable, Equatable {
    /// The column name, unquoted.
    var name: String
    /// The declared type, as written.
    var declaredType: String
    /// Its affinity.
    var affinity: Affinity
}

/// What a CREATE TABLE statement declares (see ``CreateStatementReader``).
struct ParsedCreateTable: Sendable, Equatable {
    /// Table name, unquoted.
    var name: String
    /// Columns in declaration order.
    var columns: [ColumnDescription]
    /// Index of the INTEGER PRIMARY KEY column (rowid alias), if any.
    var rowidAliasColumn: Int?
    /// Whether the table is WITHOUT ROWID.
    var withoutRowid: Bool
    /// Column indexes of the PRIMARY KEY, in key order.
    var primaryKeyColumns: [Int]
}
