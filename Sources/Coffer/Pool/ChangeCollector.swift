import CSQLCipher
import Foundation

/// Collects the rows each transaction of the writer changes and hands them over once it has committed.
///
/// Installed on the writer connection only while something observes (see ``ObservationCenter``), with
/// SQLite's hooks, all called on the writer's queue:
/// - the update hook appends each inserted, updated or deleted row of a `main` rowid table;
/// - the commit hook marks the transaction as committing; it is confirmed (and published) when the
///   writer is next seen outside a transaction, or when the next transaction's first row arrives;
/// - the rollback hook drops everything: a rolled-back transaction publishes nothing;
/// - statement tracing (`sqlite3_trace_v2`) follows `SAVEPOINT`, `RELEASE` and `ROLLBACK TO`, so rows a
///   savepoint rollback undid are dropped too, and marks the transaction as changing the whole database
///   when a writing statement changed rows SQLite did not report (schema changes, `DELETE` without
///   `WHERE`, `WITHOUT ROWID` tables, pragmas).
final class ChangeCollector {
    /// Called on the writer's queue with each committed transaction's changes, in commit order.
    private let publish: (DatabaseChangeSet) -> Void
    /// The writer connection (by ``SerializedConnection/generation``) the hooks are on.
    private(set) var installedGeneration: Int?
    /// The trace listener installed with the hooks (see `Connection.addTraceListener`).
    private var traceListener: Int?
    private var rows: [RowChange] = []
    private var wholeDatabase = false
    private var committing = false
    private var sequence: UInt64 = 0
    /// Open savepoints: name, and how many rows (and whether the whole database) were collected before.
    private var savepoints: [(name: String, rowCount: Int, wholeDatabase: Bool)] = []
    /// Rows reported since each running statement started (statements nest: triggers, virtual tables).
    private var rowsAtStatementStart: [OpaquePointer: Int] = [:]
    private var rowsReported = 0
    /// Tags of the transaction being collected (see ``ObservationCenter/tagCurrentTransaction(_:)``).
    var tags: Set<ObjectIdentifier> = []
    /// Told in the commit hook, before the commit is visible (the record cache's clock).
    private var clock: CommitClock?

    init(publish: @escaping (DatabaseChangeSet) -> Void) { self.publish = publish }

    // MARK: Installing

    /// Installs the hooks on `connection` (the writer), replacing any this collector had on another one.
    func install(on connection: Connection, generation: Int) {
        reset()
        let handle = connection.handle
        installedGeneration = generation
        clock = connection.commitClock
        let context = Unmanaged.passUnretained(self).toOpaque()
        sqlite3_update_hook(
            handle,
            { context, operation, database, table, rowID in
                guard let context, let database, let table else { return }
                Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue()
                    .didChangeRow(operation: operation, database: database, table: table, rowID: rowID)
            }, context)
        sqlite3_commit_hook(
            handle,
            { context in
                guard let context else { return 0 }
                let collector = Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue()
                collector.committing = true
                collector.clock?.commitWillStart()
                return 0
            }, context)
        sqlite3_rollback_hook(
            handle,
            { context in
                if let context { Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue().reset() }
            }, context)
        traceListener = connection.addTraceListener(mask: SQLITE_TRACE_STMT | SQLITE_TRACE_PROFILE) { [self] event in
            if event.kind == UInt32(SQLITE_TRACE_STMT) {
                if !event.isTriggerStart { statementWillRun(event.statement) }
            } else {
                statementDidRun(event.statement)
            }
        }
    }

    /// Removes the hooks (the writer is idle: outside any transaction).
    func uninstall(from connection: Connection, generation: Int) {
        guard installedGeneration == generation else { return }
        sqlite3_update_hook(connection.handle, nil, nil)
        sqlite3_commit_hook(connection.handle, nil, nil)
        sqlite3_rollback_hook(connection.handle, nil, nil)
        if let traceListener { connection.removeTraceListener(traceListener) }
        traceListener = nil
        installedGeneration = nil
        rowsAtStatementStart.removeAll()
        reset()
    }

    /// Publishes a transaction that committed, once the writer is seen outside it.
    func writerIsIdle(_ connection: Connection) {
        if committing && !connection.isInsideTransaction { confirmCommit() }
    }

    // MARK: Hooks

    private func didChangeRow(operation: Int32, database: UnsafePointer<CChar>, table: UnsafePointer<CChar>, rowID: Int64) {
        if committing { confirmCommit() }
        rowsReported &+= 1
        // TEMP tables are the writer's own; readers never see them.
        guard strcmp(database, "main") == 0 else {
            if strcmp(database, "temp") != 0 { wholeDatabase = true }
            return
        }
        let kind: RowChange.Kind =
            switch operation {
            case SQLITE_INSERT: .insert
            case SQLITE_DELETE: .delete
            default: .update
            }
        rows.append(RowChange(table: String(cString: table), rowID: rowID, kind: kind))
    }

    private func statementWillRun(_ statement: OpaquePointer) {
        if committing { confirmCommit() }
        rowsAtStatementStart[statement] = rowsReported
        // Only SAVEPOINT, RELEASE and ROLLBACK matter here: look at the first letter before building a String.
        guard let sql = sqlite3_sql(statement), Self.startsWithSavepointLetter(sql) else { return }
        let words = SavepointStatement.words(String(cString: sql))
        switch SavepointStatement(words: words) {
        case .begin(let name):
            savepoints.append((name, rows.count, wholeDatabase))
        case .release(let name):
            if let index = savepoints.lastIndex(where: { $0.name == name }) { savepoints.removeSubrange(index...) }
        case .rollback(let name):
            guard let index = savepoints.lastIndex(where: { $0.name == name }) else { return }
            rows.removeSubrange(savepoints[index].rowCount...)
            wholeDatabase = savepoints[index].wholeDatabase
            savepoints.removeSubrange((index + 1)...)
        case nil:
            break
        }
    }

    private func statementDidRun(_ statement: OpaquePointer) {
        guard let start = rowsAtStatementStart.removeValue(forKey: statement) else { return }
        guard sqlite3_stmt_readonly(statement) == 0, rowsReported == start else { return }
        // A writing statement that reported no row: no change at all, or one SQLite does not report
        // row by row.
        let words = sqlite3_sql(statement).map { SavepointStatement.words(String(cString: $0)) } ?? []
        let first = words.first ?? ""
        if Self.transactionControl.contains(first) { return }
        // Of the pragmas, only the header fields a fetch can read are data (not journal_mode, wal_checkpoint).
        if first == "PRAGMA" && !words.dropFirst().contains(where: { word in Self.headerPragmas.contains { word.contains($0) } })
        {
            return
        }
        if Self.dataStatements.contains(first) && sqlite3_changes(sqlite3_db_handle(statement)) == 0 { return }
        wholeDatabase = true
    }

    /// True when the statement's first non-blank character is an S, R (either case), or it starts otherwise
    /// oddly (a comment, a parenthesis): only those can be savepoint statements.
    private static func startsWithSavepointLetter(_ sql: UnsafePointer<CChar>) -> Bool {
        var pointer = sql
        while pointer.pointee == 0x20 || pointer.pointee == 0x0A || pointer.pointee == 0x09 || pointer.pointee == 0x0D {
            pointer += 1
        }
        switch UInt8(bitPattern: pointer.pointee) | 0x20 {
        case UInt8(ascii: "s"), UInt8(ascii: "r"): return true
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return false
        default: return true
        }
    }

    private static let dataStatements: Set<String> = ["INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"]
    /// Statements that write nothing themselves (`BEGIN IMMEDIATE` is not read-only for SQLite).
    private static let transactionControl: Set<String> = ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"]

    private static let headerPragmas = ["USER_VERSION", "APPLICATION_ID", "SCHEMA_VERSION"]

    // MARK: Commit

    private func confirmCommit() {
        let changes = rows
        let whole = wholeDatabase
        let tags = self.tags
        reset()
        guard whole || !changes.isEmpty else { return }
        sequence += 1
        publish(DatabaseChangeSet(sequence: sequence, rows: changes, isWholeDatabase: whole, isExternal: false, tags: tags))
    }

    private func reset() {
        rows.removeAll(keepingCapacity: true)
        wholeDatabase = false
        committing = false
        savepoints.removeAll()
        tags.removeAll()
    }
}

/// The savepoint statements the collector follows, recognised from their first words.
enum SavepointStatement: Equatable {
    case begin(String)
    case release(String)
    case rollback(String)

    init?(words: [String]) {
        var words = words[...]
        guard let first = words.popFirst() else { return nil }
        switch first {
        case "SAVEPOINT":
            guard let name = words.first else { return nil }
            self = .begin(name)
        case "RELEASE":
            if words.first == "SAVEPOINT" { words = words.dropFirst() }
            guard let name = words.first else { return nil }
            self = .release(name)
        case "ROLLBACK":
            if words.first == "TRANSACTION" { words = words.dropFirst() }
            guard words.popFirst() == "TO" else { return nil }
            if words.first == "SAVEPOINT" { words = words.dropFirst() }
            guard let name = words.first else { return nil }
            self = .rollback(name)
        default:
            return nil
        }
    }

    /// The first few words of `sql`, upper-cased (savepoint names compare ignoring ASCII case), quotes
    /// removed; stops at a `;`.
    static func words(_ sql: String) -> [String] {
        var words: [String] = []
        var current = ""
        var quote: Character?
        for character in sql.prefix(256) {
            if let open = quote {
                if character == open || (open == "[" && character == "]") {
                    quote = nil
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case "\"", "'", "`", "[": quote = character
            case ";": return words + (current.isEmpty ? [] : [current.uppercased()])
            case " ", "\n", "\t", "\r":
                if !current.isEmpty { words.append(current.uppercased()) }
                current = ""
                if words.count == 4 { return words }
            default: current.append(character)
            }
        }
        return words + (current.isEmpty ? [] : [current.uppercased()])
    }
}
