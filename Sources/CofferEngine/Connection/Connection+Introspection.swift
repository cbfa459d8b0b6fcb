// Connection+Introspection — what the file's schema says, read through PRAGMAs: schema upgrades,
// migrations and full-text indexes ask it.

extension Connection {
    /// The column names of a table, empty when it does not exist.
    package func columnNames(of table: String) throws -> [String] {
        try pragmaRows("PRAGMA table_info(" + (try SQLIdentifier.validated(table)) + ")").compactMap { $0["name"] }
    }

    /// The rows of a PRAGMA, from a statement prepared afresh and never cached: SQLite computes some
    /// PRAGMA results (`table_info`, `foreign_keys`) when it prepares them, so a cached statement would
    /// keep describing the state of the time it was first prepared.
    package func pragmaRows(_ sql: String) throws -> [Row] {
        let statement = try makeStatement(sql: sql)
        var rows: [Row] = []
        while try statement.step() { rows.append(statement.row()) }
        return rows
    }
}
