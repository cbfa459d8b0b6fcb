// CreateStatementReader — SQLite itself reads the CREATE statements of a damaged file's schema.
//
// Each statement runs in a private in-memory database (under ``UntrustedCreate``'s authorizer, inside a
// transaction that is rolled back afterwards, so every statement sees an empty database), and what it
// created is read back with SQLite's own pragmas:
// - a table: `PRAGMA table_info` (a table of SQLite's own — sqlite_sequence, sqlite_stat1…4 — whose name
//   is reserved, from its statement run under another name) (names unquoted exactly as SQLite unquotes them, declared types, PRIMARY
//   KEY order); WITHOUT ROWID is a PRIMARY KEY index (`PRAGMA index_list`, origin "pk") that has no
//   sqlite_master entry of its own; the rowid alias is a single INTEGER PRIMARY KEY column with no such
//   index (INTEGER PRIMARY KEY DESC gets one, and is no alias);
// - a virtual table: its module, whether this library has it (the CREATE fails with "no such module"
//   otherwise), the shadow tables the module creates for it, and for FTS whether this SQLite's
//   integrity-check works on such a table (two documents written, then checked);
// - an index: the columns it indexes (`PRAGMA index_info`; an expression has no column).
// Nothing in the statement is guessed: a statement SQLite refuses yields nil.

import Coffer

/// Reads CREATE statements through SQLite (see the file comment).
final class CreateStatementReader {
    private var scratch: Database?
    /// SQLite's message for the last statement it refused.
    private(set) var lastRefusal = ""
    /// Thrown to roll the scratch transaction back after a successful read.
    private struct Discard: Error {}

    /// What `sql` (the CREATE TABLE statement of table `name`) declares, or nil if SQLite refuses it.
    func table(sql: String, name: String) -> ParsedCreateTable? {
        let shape = inScratch { connection -> ParsedCreateTable? in
            // SQLite's own tables (sqlite_sequence, sqlite_stat1…4) have reserved names: their statement,
            // which SQLite wrote as `CREATE TABLE <name>(…)`, is read under a name of our own.
            let prefix = "CREATE TABLE \(name)("
            if name.lowercased().hasPrefix("sqlite_"), sql.hasPrefix(prefix) {
                let probe = "coffer_internal_table"
                let renamed = "CREATE TABLE \(probe)(" + sql.dropFirst(prefix.count)
                try UntrustedCreate(kind: .table, name: probe, table: probe, sql: renamed).run(on: connection)
                return try Self.shape(of: probe, connection: connection).map { shape in
                    var shape = shape
                    shape.name = name
                    return shape
                }
            }
            try UntrustedCreate(kind: .table, name: name, table: name, sql: sql).run(on: connection)
            return try Self.shape(of: name, connection: connection)
        }
        return shape ?? nil
    }

    /// The virtual table `sql` declares (named `name`), or nil if it is not a CREATE VIRTUAL TABLE of that
    /// name. A module the library lacks gives an unavailable description.
    func virtualTable(sql: String, name: String) -> VirtualTableDescription? {
        var module: String?
        let statement = UntrustedCreate(kind: .virtualTable, name: name, table: name, sql: sql)
        let created = inScratch { connection -> (shadows: [String], checkWorks: Bool) in
            try connection.withAuthorizer({ request in
                let verdict = statement.allows(request)
                if verdict.creates { module = request.second?.lowercased() }
                return verdict.allowed
            }) { _ = try connection.makeStatement(sql: sql) }
            try statement.run(on: connection)
            let shadows = try connection.fetchAll(
                sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND rootpage > 0 ORDER BY rowid"
            ).compactMap { row -> String? in row["name"] }
            let fullText = ["fts3", "fts4"].contains(module ?? "")
            return (shadows, try !fullText || Self.fullTextCheckWorks(name, connection: connection))
        }
        guard let module else { return nil }
        var virtual = VirtualTableDescription(
            name: name, module: module, sql: sql, isAvailable: created != nil, shadowTables: created?.shadows ?? [])
        virtual.integrityCheckWorks = created?.checkWorks ?? true
        if created == nil { virtual.unavailableReason = lastRefusal }
        return virtual
    }

    /// Whether FTS's integrity-check passes on the freshly created table `name` holding two documents.
    /// Only a corruption report counts as not working: a check that cannot run here (an external content
    /// table that is absent from the private database, a contentless table) says nothing.
    private static func fullTextCheckWorks(_ name: String, connection: Connection) throws -> Bool {
        let quoted = SQLIdentifier.quote(name)
        let columns = try connection.fetchAll(sql: "PRAGMA table_info(\(quoted))").compactMap { row -> String? in row["name"] }
        let names = (["docid"] + columns.map(SQLIdentifier.quote)).joined(separator: ", ")
        let text = Array(repeating: "'x y z'", count: columns.count).joined(separator: ", ")
        do {
            try connection.execute(sql: "INSERT INTO \(quoted)(\(names)) VALUES (1, \(text)), (2, \(text))")
            try connection.execute(sql: "INSERT INTO \(quoted)(\(quoted)) VALUES('integrity-check')")
        } catch let error as CofferError where error.code.primary == .corrupt {
            return false
        } catch {
            return true
        }
        return true
    }

    /// The column names an index's entries hold, in order (nil for an expression), or nil if the index or
    /// its table's statement is refused.
    func indexedColumns(index: SchemaEntry, table: TableDescription) -> [String?]? {
        guard let sql = index.sql else { return nil }
        return inScratch { connection in
            try UntrustedCreate(kind: .table, name: table.name, table: table.name, sql: table.sql).run(on: connection)
            try UntrustedCreate(kind: .index, name: index.name, table: table.name, sql: sql).run(on: connection)
            return try connection.fetchAll(sql: "PRAGMA index_info(\(SQLIdentifier.quote(index.name)))").map { row -> String? in
                row["name"]
            }
        }
    }

    /// Runs `body` in a transaction of the private database that is always rolled back; nil on any error.
    private func inScratch<T>(_ body: (Connection) throws -> T) -> T? {
        do {
            let database = try scratch ?? Database.inMemory()
            scratch = database
            var result: T?
            do {
                try database.writeWithoutTransaction { connection in
                    try connection.inTransaction {
                        result = try body(connection)
                        throw Discard()
                    }
                }
            } catch is Discard {}
            return result
        } catch {
            lastRefusal = (error as? CofferError)?.message ?? "\(error)"
            return nil
        }
    }

    /// The shape of table `name` as SQLite created it on `connection`.
    private static func shape(of name: String, connection: Connection) throws -> ParsedCreateTable? {
        let quoted = SQLIdentifier.quote(name)
        var columns: [ColumnDescription] = []
        var keyed: [(position: Int, column: Int)] = []
        for row in try connection.fetchAll(sql: "PRAGMA table_info(\(quoted))") {
            guard let column: String = row["name"] else { return nil }
            let type: String = row["type"] ?? ""
            let position: Int = row["pk"] ?? 0
            if position > 0 { keyed.append((position, columns.count)) }
            columns.append(ColumnDescription(name: column, declaredType: type, affinity: Affinity(declaredType: type)))
        }
        guard !columns.isEmpty else { return nil }
        let primaryKey = keyed.sorted { $0.position < $1.position }.map(\.column)
        let keyIndex = try connection.fetchAll(sql: "PRAGMA index_list(\(quoted))").first { row in
            (row["origin"] as String?) == "pk"
        }
        var withoutRowid = false
        if let keyIndex, let indexName: String = keyIndex["name"] {
            let entries = try connection.fetchValue(
                Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = ?", arguments: [indexName])
            withoutRowid = entries == 0
        }
        var alias: Int?
        if keyIndex == nil, primaryKey.count == 1, let only = primaryKey.first,
            columns[only].declaredType.uppercased() == "INTEGER"
        {
            alias = only
        }
        return ParsedCreateTable(
            name: name, columns: columns, rowidAliasColumn: alias, withoutRowid: withoutRowid,
            primaryKeyColumns: primaryKey)
    }
}
