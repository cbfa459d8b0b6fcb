// VirtualTableDescription — a virtual table of a damaged file's schema, as CreateStatementReader reads it.

/// A virtual table of the schema (`CREATE VIRTUAL TABLE name USING module(…)`).
struct VirtualTableDescription: Sendable, Codable, Equatable {
    /// The virtual table's name.
    var name: String
    /// Its module ("fts4", "rtree", "fts5", …), lowercased.
    var module: String
    /// Its CREATE VIRTUAL TABLE statement.
    var sql: String
    /// Whether the linked SQLite can create it (it has the module, and the module accepts the arguments).
    var isAvailable: Bool
    /// Why it cannot be created here ("no such module: fts5", "unknown tokenizer: icu"), when unavailable.
    var unavailableReason = ""
    /// The shadow tables the module creates for it (when available), in creation order.
    var shadowTables: [String]
    /// For FTS: whether this SQLite's `integrity-check` passes on an intact table so declared (SQLite 3.15's
    /// fails on every order=DESC table with two documents), so that a failure means damage.
    var integrityCheckWorks = true
}
