// UntrustedCreate — running one CREATE statement read from a damaged file's sqlite_master.
//
// The SQL is untrusted: it is run as exactly one statement (Coffer's Statement refuses trailing SQL) under
// an authorizer that allows only what creating that one object needs:
// - the CREATE action of the expected kind, for the expected name (a CREATE TEMP …, or an object of
//   another name, is refused); a virtual table may also create its own shadow tables (`name_*`), a table
//   its automatic indexes and `sqlite_sequence`;
// - reads and writes of sqlite_master, of the object's own table (and a virtual table's shadow tables,
//   which its module initializes), reading columns of the table an index or CHECK refers to;
// - SQL functions (other than load_extension), SELECT, REINDEX of the index being created, and
//   `PRAGMA page_size` read without argument (FTS and R*Tree ask for it while creating their tables).
// Everything else — ATTACH, DETACH, other PRAGMAs, transactions, DROP, ALTER, another schema than main —
// is denied, and SQLite then refuses to prepare the statement ("not authorized").

import Coffer

/// One CREATE statement from an untrusted schema, and what it must create.
struct UntrustedCreate {
    /// The kind of object a statement must create.
    enum Kind: String, Sendable {
        case table
        case virtualTable = "virtual table"
        case index, view, trigger
    }

    /// The kind expected.
    let kind: Kind
    /// The object's name (from sqlite_master).
    let name: String
    /// The table an index or trigger belongs to (sqlite_master's tbl_name).
    let table: String?
    /// The statement.
    let sql: String

    /// Prepares and runs the statement on `connection` under the authorizer. Throws when SQLite refuses it
    /// (syntax, "not authorized", "no such module", a missing table) or when it did not create the
    /// expected object.
    func run(on connection: Connection) throws {
        var created = false
        try connection.withAuthorizer({ request in
            let verdict = allows(request)
            if verdict.creates { created = true }
            return verdict.allowed
        }) {
            let statement = try connection.makeStatement(sql: sql)
            while try statement.step() {}
        }
        guard created else {
            throw CofferError(code: .permission, message: "not a CREATE \(kind.rawValue) of \(name)", sql: sql)
        }
    }

    /// Whether `request` is allowed, and whether it is the CREATE of the expected object itself.
    func allows(_ request: AuthorizerRequest) -> (allowed: Bool, creates: Bool) {
        if let database = request.database, database != "main" { return (false, false) }
        guard let action = request.action else { return (false, false) }
        let own = name.lowercased()
        let first = request.first?.lowercased()
        let isOwn = first == own
        switch action {
        case .createTable:
            if kind == .table, isOwn { return (true, true) }
            return (isShadow(first) || first == "sqlite_sequence", false)
        case .createVirtualTable:
            return (kind == .virtualTable && isOwn, kind == .virtualTable && isOwn)
        case .createIndex:
            if kind == .index, isOwn { return (true, true) }
            return (first?.hasPrefix("sqlite_autoindex_") == true && touches(request.second?.lowercased()), false)
        case .createView:
            return (kind == .view && isOwn, kind == .view && isOwn)
        case .createTrigger:
            return (kind == .trigger && isOwn, kind == .trigger && isOwn)
        case .insert, .update, .delete, .read:
            return (touches(first), false)
        case .select:
            return (true, false)
        case .function:
            return (request.second?.lowercased() != "load_extension", false)
        case .reindex:
            return (kind == .index && isOwn, false)
        case .pragma:
            return (first == "page_size" && request.second == nil, false)
        default:
            return (false, false)
        }
    }

    /// Whether the statement may read or write `table`: sqlite_master, sqlite_sequence, the object itself,
    /// a virtual table's shadow tables, or the table an index or trigger belongs to.
    private func touches(_ table: String?) -> Bool {
        guard let table else { return false }
        return table == "sqlite_master" || table == "sqlite_sequence" || table == name.lowercased()
            || table == self.table?.lowercased() || isShadow(table)
    }

    private func isShadow(_ table: String?) -> Bool {
        guard kind == .virtualTable, let table else { return false }
        return table.hasPrefix(name.lowercased() + "_")
    }
}
