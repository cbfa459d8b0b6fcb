import CSQLCipher
import Foundation

/// Collects the rows each transaction of the writer changes and hands them over once it has committed.
///
/// Installed on the writer connection only while something observes (see ``ObservationCenter``), with
/// SQLite's hooks, all called on the writer's queue. In ``ObservationDemand/rows`` mode:
/// - the update hook appends each inserted, updated or deleted row of a `main` rowid table; an update
///   remembers its statement, whose assigned columns are worked out when the change set is published
///   (``UpdatedColumnsResolver``);
/// - the commit hook marks the transaction as committing; it is confirmed (and published) when the
///   writer is next seen outside it, or when the next transaction's first row or statement arrives;
/// - the rollback hook drops everything: a rolled-back transaction publishes nothing;
/// - statement tracing (`sqlite3_trace_v2`) follows `SAVEPOINT`, `RELEASE` and `ROLLBACK TO`, so rows a
///   savepoint rollback undid are dropped too, and marks the transaction as changing the whole database
///   when a writing statement changed rows SQLite did not report (schema changes, `DELETE` without
///   `WHERE`, `WITHOUT ROWID` tables, pragmas).
///
/// A row of a table no subscriber follows (every subscriber named its tables, none this one) is counted but
/// not collected: a commit to such tables alone publishes nothing. Subscribers follow more tables while
/// transactions run (an observation widens before its first fetch, without waiting for the writer), so a
/// transaction that skipped a row and is published after the followed tables changed counts as changing the
/// whole database: the widening came before the subscriber's fetch and the commit, if that fetch did not
/// see it, after it; the center's count of such changes tells the collector, which compares it when it
/// publishes with the count at the first row skipped.
///
/// In ``ObservationDemand/tables`` mode there is no trace: the update hook notes table names (a string
/// comparison per row), and rows changed without the hook are noticed by comparing
/// `sqlite3_total_changes` with the rows reported; savepoint rollbacks are not followed (a cache then
/// empties itself once too often).
final class ChangeCollector {
    /// Called on the writer's queue with each committed transaction's changes, in commit order.
    private let publish: (DatabaseChangeSet) -> Void
    /// The center's count of changes to the followed tables, and the tables with the count they go with.
    private let followedVersion: () -> Int
    private let followedTables: () -> (version: Int, tables: Set<String>?)
    /// Rows mode: the lower-cased tables some subscriber follows (nil: every one), as of `knownVersion`.
    private var followed: Set<String>?
    private var knownVersion: Int?
    /// Rows mode: the center's count when this transaction first skipped a row (nil: it skipped none).
    private var skippedAtVersion: Int?
    /// Rows mode: the table of the last row seen, and whether its rows are collected.
    private var lastRowTable = LastTableName()
    private var lastRowTableCollected = true
    /// The writer connection (by ``SerializedConnection/generation``) the hooks are on.
    private(set) var installedGeneration: Int?
    /// The trace listener installed with the hooks in rows mode (see `Connection.addTraceListener`).
    private var traceListener: Int?
    private(set) var mode: ObservationDemand = .rows
    private var handle: OpaquePointer?
    private var rows: [RowChange] = []
    /// Tables mode: the tables changed, and the last one seen (most rows follow one of the same table).
    private var tables: Set<String> = []
    private var lastTable = LastTableName()
    private var wholeDatabase = false
    private var committing = false
    private var sequence: UInt64 = 0
    /// Open savepoints: name, how many rows and updates (and whether the whole database) were collected before.
    private var savepoints: [(name: String, rowCount: Int, updateCount: Int, wholeDatabase: Bool)] = []
    /// Rows reported since each running statement started (statements nest: triggers, virtual tables).
    /// A short stack (innermost last): a dictionary's hashing cost more than the search, per statement.
    private var rowsAtStatementStart: [(statement: OpaquePointer, rows: Int)] = []
    private var rowsReported = 0
    /// `sqlite3_total_changes` when the transaction started to be collected (tables mode).
    private var totalChangesAtStart: Int32 = 0
    /// The statement that started last, and its SQL's index in `statementSQL` once one of its rows was an update.
    private var lastStartedStatement: OpaquePointer?
    private var lastStartedSQLIndex: Int?
    /// The SQL of the statements that updated rows, and which row each update is (row index, SQL index).
    private var statementSQL: [String] = []
    private var updates: [(row: Int, sql: Int)] = []
    private let resolver = UpdatedColumnsResolver()
    /// Tags of the transaction being collected (see ``ObservationCenter/tagCurrentTransaction(_:)``).
    var tags: Set<ObjectIdentifier> = []
    /// Told in the commit hook, before the commit is visible (the record cache's clock).
    private var clock: CommitClock?

    init(
        publish: @escaping (DatabaseChangeSet) -> Void, followedVersion: @escaping () -> Int,
        followedTables: @escaping () -> (version: Int, tables: Set<String>?)
    ) {
        self.publish = publish
        self.followedVersion = followedVersion
        self.followedTables = followedTables
    }

    // MARK: Installing

    /// Installs the hooks `mode` needs on `connection` (the writer), replacing any this collector had.
    /// Switched inside a transaction, that transaction counts as changing the whole database.
    func install(_ mode: ObservationDemand, on connection: Connection, generation: Int) {
        let switchesMidTransaction = installedGeneration == generation && connection.isInsideTransaction
        // A listener left on this same connection by the mode being replaced (one on a replaced
        // connection went with it).
        if installedGeneration == generation, let traceListener { connection.removeTraceListener(traceListener) }
        traceListener = nil
        reset()
        wholeDatabase = switchesMidTransaction
        self.mode = mode
        let handle = connection.handle
        self.handle = handle
        installedGeneration = generation
        clock = connection.commitClock
        totalChangesAtStart = sqlite3_total_changes(handle)
        let context = Unmanaged.passUnretained(self).toOpaque()
        switch mode {
        case .rows:
            sqlite3_update_hook(
                handle,
                { context, operation, database, table, rowID in
                    guard let context, let database, let table else { return }
                    Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue()
                        .didChangeRow(operation: operation, database: database, table: table, rowID: rowID)
                }, context)
        case .tables:
            sqlite3_update_hook(
                handle,
                { context, _, database, table, _ in
                    guard let context, let database, let table else { return }
                    Unmanaged<ChangeCollector>.fromOpaque(context).takeUnretainedValue().didChangeTable(
                        database: database, table: table)
                }, context)
        }
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
        guard mode == .rows else { return }
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
        handle = nil
        rowsAtStatementStart.removeAll()
        reset()
    }

    /// Publishes a transaction that committed, once the writer is seen outside it.
    func writerIsIdle(_ connection: Connection) {
        if committing && !connection.isInsideTransaction { confirmCommit(preparingOn: connection) }
    }

    // MARK: Hooks

    private func didChangeRow(operation: Int32, database: UnsafePointer<CChar>, table: UnsafePointer<CChar>, rowID: Int64) {
        if committing { confirmCommit(preparingOn: nil) }
        rowsReported &+= 1
        // TEMP tables are the writer's own; readers never see them.
        guard strcmp(database, "main") == 0 else {
            if strcmp(database, "temp") != 0 { wholeDatabase = true }
            return
        }
        guard isCollected(table) else { return }
        let kind: RowChange.Kind =
            switch operation {
            case SQLITE_INSERT: .insert
            case SQLITE_DELETE: .delete
            default: .update
            }
        if kind == .update { noteUpdate(row: rows.count) }
        rows.append(RowChange(table: String(cString: table), rowID: rowID, kind: kind))
    }

    /// Whether rows of `table` (of `main`) are collected: some subscriber follows it. The first row skipped
    /// notes the center's count in `skippedAtVersion`.
    private func isCollected(_ table: UnsafePointer<CChar>) -> Bool {
        refreshFollowedTables()
        guard let followed else { return true }
        if !lastRowTable.isSame(table) {
            lastRowTableCollected = followed.contains(String(cString: table).lowercased())
            lastRowTable.remember(table)
        }
        if !lastRowTableCollected && skippedAtVersion == nil { skippedAtVersion = knownVersion }
        return lastRowTableCollected
    }

    /// Reads the followed tables again when the center's count moved.
    private func refreshFollowedTables() {
        guard followedVersion() != knownVersion else { return }
        (knownVersion, followed) = followedTables()
        lastRowTable.forget()
    }

    /// Remembers which statement made the update at `row` (its SQL, built once per statement).
    private func noteUpdate(row: Int) {
        if lastStartedSQLIndex == nil, let statement = lastStartedStatement, let sql = sqlite3_sql(statement) {
            statementSQL.append(String(cString: sql))
            lastStartedSQLIndex = statementSQL.count - 1
        }
        // Without a known statement (nothing traced yet) the update's columns stay unknown.
        updates.append((row, lastStartedSQLIndex ?? -1))
    }

    private func didChangeTable(database: UnsafePointer<CChar>, table: UnsafePointer<CChar>) {
        if committing { confirmCommit(preparingOn: nil) }
        rowsReported &+= 1
        if lastTable.isSame(table) { return }
        guard strcmp(database, "main") == 0 else {
            if strcmp(database, "temp") != 0 { wholeDatabase = true }
            return
        }
        lastTable.remember(table)
        tables.insert(String(cString: table).lowercased())
    }

    private func statementWillRun(_ statement: OpaquePointer) {
        if committing { confirmCommit(preparingOn: nil) }
        rowsAtStatementStart.append((statement, rowsReported))
        lastStartedStatement = statement
        lastStartedSQLIndex = nil
        // Only SAVEPOINT, RELEASE and ROLLBACK matter here: look at the first letter before building a String.
        guard let sql = sqlite3_sql(statement),
            Self.firstLetter(sql).map({ $0 == UInt8(ascii: "s") || $0 == UInt8(ascii: "r") }) ?? true
        else { return }
        let words = SavepointStatement.words(String(cString: sql))
        switch SavepointStatement(words: words) {
        case .begin(let name):
            savepoints.append((name, rows.count, updates.count, wholeDatabase))
        case .release(let name):
            if let index = savepoints.lastIndex(where: { $0.name == name }) { savepoints.removeSubrange(index...) }
        case .rollback(let name):
            guard let index = savepoints.lastIndex(where: { $0.name == name }) else { return }
            rows.removeSubrange(savepoints[index].rowCount...)
            updates.removeSubrange(savepoints[index].updateCount...)
            wholeDatabase = savepoints[index].wholeDatabase
            savepoints.removeSubrange((index + 1)...)
        case nil:
            break
        }
    }

    private func statementDidRun(_ statement: OpaquePointer) {
        guard let index = rowsAtStatementStart.lastIndex(where: { $0.statement == statement }) else { return }
        let start = rowsAtStatementStart.remove(at: index).rows
        guard sqlite3_stmt_readonly(statement) == 0, rowsReported == start, let sql = sqlite3_sql(statement) else { return }
        // BEGIN (the only statement starting with B) writes nothing itself: no String for it at each commit.
        if Self.firstLetter(sql) == UInt8(ascii: "b") { return }
        // A writing statement that reported no row: no change at all, or one SQLite does not report
        // row by row.
        let words = SavepointStatement.words(String(cString: sql))
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

    /// The statement's first non-blank byte, lower-cased when it is an ASCII letter; nil when it is something
    /// else (a comment, a parenthesis), which callers treat as "could be anything". A byte, not a `Character`:
    /// this runs for every statement the writer runs while something observes.
    private static func firstLetter(_ sql: UnsafePointer<CChar>) -> UInt8? {
        var pointer = sql
        while pointer.pointee == 0x20 || pointer.pointee == 0x0A || pointer.pointee == 0x09 || pointer.pointee == 0x0D {
            pointer += 1
        }
        let lowered = UInt8(bitPattern: pointer.pointee) | 0x20
        guard (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(lowered) else { return nil }
        return lowered
    }

    private static let dataStatements: Set<String> = ["INSERT", "UPDATE", "DELETE", "REPLACE", "WITH"]
    /// Statements that write nothing themselves (`BEGIN IMMEDIATE` is not read-only for SQLite).
    private static let transactionControl: Set<String> = ["BEGIN", "COMMIT", "END", "ROLLBACK", "SAVEPOINT", "RELEASE"]

    private static let headerPragmas = ["USER_VERSION", "APPLICATION_ID", "SCHEMA_VERSION"]

    // MARK: Commit

    /// Publishes the committed transaction. `connection` is the idle writer, on which the columns of
    /// updates not seen before can be worked out; nil inside a hook (only remembered columns are known).
    private func confirmCommit(preparingOn connection: Connection?) {
        var changes = rows
        var whole = wholeDatabase
        var changedTables = tables
        if mode == .tables, let handle, Int(sqlite3_total_changes(handle) &- totalChangesAtStart) > rowsReported {
            // Rows changed that the update hook did not report (DELETE without WHERE, WITHOUT ROWID).
            whole = true
        }
        let skipped = skippedAtVersion != nil
        if let skippedAtVersion, followedVersion() != skippedAtVersion {
            // Subscribers changed what they follow since a row was skipped: it may be followed now.
            whole = true
        }
        var moved: Set<String> = []
        if mode == .rows {
            if whole { resolver.forget() }
            moved = resolveUpdatedColumns(&changes, preparingOn: whole ? nil : connection)
            changedTables = DatabaseChangeSet.lowercasedTables(of: changes)
        }
        let tags = self.tags
        reset()
        guard whole || !changedTables.isEmpty else {
            // A commit of skipped rows only keeps its place in the count, told to nobody.
            if skipped { sequence += 1 }
            return
        }
        sequence += 1
        publish(
            DatabaseChangeSet(
                sequence: sequence, rows: changes, tables: changedTables, movedTables: moved, isWholeDatabase: whole,
                isExternal: false, tags: tags))
    }

    /// Fills in the columns of the updates in `changes`; returns the tables whose rows may have moved
    /// (a key updated, or the columns unknown).
    private func resolveUpdatedColumns(_ changes: inout [RowChange], preparingOn connection: Connection?) -> Set<String> {
        guard !updates.isEmpty else { return [] }
        var moved: Set<String> = []
        var resolved: [Int: UpdatedColumns?] = [:]
        for (row, sql) in updates {
            let columns: UpdatedColumns?
            if let known = resolved[sql] {
                columns = known
            } else {
                columns = sql >= 0 ? resolver.columns(for: statementSQL[sql], preparingOn: connection) : nil
                resolved[sql] = .some(columns)
            }
            let table = changes[row].table
            guard let columns, let assigned = columns.byTable[table] else {
                moved.insert(table.lowercased())
                continue
            }
            changes[row].updatedColumns = assigned
            moved.formUnion(columns.movedTables)
        }
        return moved
    }

    private func reset() {
        rows.removeAll(keepingCapacity: true)
        if !tables.isEmpty {
            tables.removeAll()
            lastTable.forget()
        }
        wholeDatabase = false
        committing = false
        savepoints.removeAll()
        tags.removeAll()
        statementSQL.removeAll()
        updates.removeAll()
        lastStartedSQLIndex = nil
        rowsReported = 0
        rowsAtStatementStart.removeAll(keepingCapacity: true)
        skippedAtVersion = nil
        if let handle { totalChangesAtStart = sqlite3_total_changes(handle) }
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

/// The name of the last table a hook saw, kept as C bytes so that the next row of the same table costs one
/// `strcmp` and no `String`.
private struct LastTableName {
    private var bytes: [CChar] = [0]

    func isSame(_ table: UnsafePointer<CChar>) -> Bool { strcmp(table, bytes) == 0 }

    mutating func remember(_ table: UnsafePointer<CChar>) {
        bytes = Array(UnsafeBufferPointer(start: table, count: strlen(table) + 1))
    }

    mutating func forget() { bytes = [0] }
}
