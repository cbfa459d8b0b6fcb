import CSQLCipher

/// The columns a writing statement's `UPDATE`s set, per table — its own and those of the triggers it
/// fires — learnt from SQLite's authorizer (`SQLITE_UPDATE`, one call per assigned column) by preparing
/// the statement's SQL again on the writer once the transaction is over. SQLite's update hook names the
/// row, not the columns: this is what lets an observation that did not read a column skip its updates.
struct UpdatedColumns: Sendable, Equatable {
    /// Lower-cased column names, by table name as the schema spells it.
    var byTable: [String: Set<String>] = [:]
    /// Tables (lower-cased) whose rows may have changed rowid: an update of their primary key or `rowid`.
    /// SQLite reports such an update under the new rowid only, so the old one is unknown.
    var movedTables: Set<String> = []
}

/// Works out and remembers ``UpdatedColumns`` per SQL text (for the writer's ``ChangeCollector``).
final class UpdatedColumnsResolver {
    private var cache: [String: UpdatedColumns] = [:]

    /// Forgets what was worked out (the schema may have changed).
    func forget() { cache.removeAll() }

    /// The columns `sql` updates: remembered, or worked out on `connection` (the idle writer; nil when the
    /// caller is inside one of SQLite's hooks, where preparing is not allowed). Nil when unknown.
    func columns(for sql: String, preparingOn connection: Connection?) -> UpdatedColumns? {
        if let known = cache[sql] { return known }
        guard let connection, let found = Self.resolve(sql, on: connection) else { return nil }
        // Bounded: an app's writing statements are few; generated SQL must not grow this forever.
        if cache.count >= 512 { cache.removeAll() }
        cache[sql] = found
        return found
    }

    private static func resolve(_ sql: String, on connection: Connection) -> UpdatedColumns? {
        var columns = UpdatedColumns()
        var assigned: [(table: String, column: String)] = []
        var elsewhere = false
        let prepared = try? connection.withAuthorizer({ request in
            if request.action == .update, let table = request.first, let column = request.second {
                if request.database == "main" { assigned.append((table, column)) } else { elsewhere = true }
            }
            return true
        }) { try connection.makeStatement(sql: sql) }
        guard prepared != nil, !elsewhere else { return nil }
        for (table, column) in assigned {
            columns.byTable[table, default: []].insert(column.lowercased())
            if isRowIDOrKey(column, of: table, on: connection) { columns.movedTables.insert(table.lowercased()) }
        }
        return columns
    }

    /// True for `rowid` (and its aliases) and for any column of the table's primary key.
    private static func isRowIDOrKey(_ column: String, of table: String, on connection: Connection) -> Bool {
        if ["rowid", "oid", "_rowid_"].contains(column.lowercased()) { return true }
        var primaryKey: Int32 = 0
        let code = sqlite3_table_column_metadata(connection.handle, "main", table, column, nil, nil, nil, &primaryKey, nil)
        return code != SQLITE_OK || primaryKey != 0
    }
}
