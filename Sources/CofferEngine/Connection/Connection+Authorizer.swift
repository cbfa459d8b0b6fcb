// Connection+Authorizer — SQLite's authorizer (sqlite3_set_authorizer) for a stretch of code.
//
// SQLite asks the authorizer about every action a statement performs while it prepares the statement (and
// again if it re-prepares it). Coffer uses it to run SQL that comes from an untrusted file — a CREATE
// statement read from a damaged database's sqlite_master — allowing exactly the actions that statement
// should need and refusing everything else (ATTACH, PRAGMA, other tables, TEMP objects).

import CSQLCipher

/// An action SQLite asks the authorizer about (the `SQLITE_*` action codes of `sqlite3_set_authorizer`).
public enum AuthorizerAction: Int32, Sendable {
    // The raw values are SQLite's action codes (sqlite3.h), stable across versions.
    /// CREATE INDEX (index name, table name).
    case createIndex = 1
    /// CREATE TABLE (table name).
    case createTable = 2
    /// CREATE TEMP INDEX.
    case createTempIndex = 3
    /// CREATE TEMP TABLE.
    case createTempTable = 4
    /// CREATE TEMP TRIGGER.
    case createTempTrigger = 5
    /// CREATE TEMP VIEW.
    case createTempView = 6
    /// CREATE TRIGGER (trigger name, table name).
    case createTrigger = 7
    /// CREATE VIEW (view name).
    case createView = 8
    /// DELETE (table name).
    case delete = 9
    /// DROP INDEX.
    case dropIndex = 10
    /// DROP TABLE.
    case dropTable = 11
    /// DROP TEMP INDEX.
    case dropTempIndex = 12
    /// DROP TEMP TABLE.
    case dropTempTable = 13
    /// DROP TEMP TRIGGER.
    case dropTempTrigger = 14
    /// DROP TEMP VIEW.
    case dropTempView = 15
    /// DROP TRIGGER.
    case dropTrigger = 16
    /// DROP VIEW.
    case dropView = 17
    /// INSERT (table name).
    case insert = 18
    /// PRAGMA (pragma name, argument).
    case pragma = 19
    /// Reading a column (table name, column name).
    case read = 20
    /// SELECT.
    case select = 21
    /// BEGIN, COMMIT, ROLLBACK.
    case transaction = 22
    /// UPDATE (table name, column name).
    case update = 23
    /// ATTACH (file name).
    case attach = 24
    /// DETACH (schema name).
    case detach = 25
    /// ALTER TABLE (schema name, table name).
    case alterTable = 26
    /// REINDEX.
    case reindex = 27
    /// ANALYZE.
    case analyze = 28
    /// CREATE VIRTUAL TABLE (table name, module name).
    case createVirtualTable = 29
    /// DROP VIRTUAL TABLE.
    case dropVirtualTable = 30
    /// Calling an SQL function (function name in ``AuthorizerRequest/second``).
    case function = 31
    /// SAVEPOINT.
    case savepoint = 32
    /// A recursive common table expression.
    case recursive = 33
}

/// One question SQLite asks the authorizer.
public struct AuthorizerRequest: Sendable, Equatable {
    /// The action, or nil for a code this build does not name.
    public var action: AuthorizerAction?
    /// The raw action code.
    public var code: Int32
    /// The action's first argument (usually an object name).
    public var first: String?
    /// The action's second argument (a table, column, module or function name).
    public var second: String?
    /// The schema ("main", "temp", an attached name), when the action has one.
    public var database: String?
    /// The innermost trigger or view responsible, if any.
    public var trigger: String?
}

/// The policy's box, handed to SQLite as the callback's context while the authorizer is installed.
private final class AuthorizerBox {
    let policy: (AuthorizerRequest) -> Bool
    init(_ policy: @escaping (AuthorizerRequest) -> Bool) { self.policy = policy }
}

extension Connection {
    /// Runs `body` with an authorizer installed: every action of every statement prepared meanwhile is
    /// allowed only if `policy` returns true (otherwise preparing fails with "not authorized"). The
    /// authorizer is removed when `body` returns or throws.
    ///
    /// ```swift
    /// try connection.withAuthorizer({ $0.action == .createTable || $0.action == .insert }) {
    ///     try connection.makeStatement(sql: untrustedCreate).step()
    /// }
    /// ```
    public func withAuthorizer<T>(_ policy: (AuthorizerRequest) -> Bool, _ body: () throws -> T) rethrows -> T {
        try withoutActuallyEscaping(policy) { escaping in
            let box = AuthorizerBox(escaping)
            let context = Unmanaged.passUnretained(box).toOpaque()
            sqlite3_set_authorizer(
                handle,
                { context, code, first, second, database, trigger in
                    guard let context else { return SQLITE_DENY }
                    let box = Unmanaged<AuthorizerBox>.fromOpaque(context).takeUnretainedValue()
                    let request = AuthorizerRequest(
                        action: AuthorizerAction(rawValue: code), code: code, first: first.map { String(cString: $0) },
                        second: second.map { String(cString: $0) }, database: database.map { String(cString: $0) },
                        trigger: trigger.map { String(cString: $0) })
                    return box.policy(request) ? SQLITE_OK : SQLITE_DENY
                }, context)
            defer { sqlite3_set_authorizer(handle, nil, nil) }
            return try withExtendedLifetime(box) { try body() }
        }
    }
}
