import CSQLCipher
import Foundation
import Logging

/// One SQLite connection: the handle your `read` and `write` closures receive.
///
/// A connection is used by one thread at a time, on the queue of the ``Database`` that owns it; never keep
/// it beyond the closure. It caches prepared statements per SQL string.
///
/// ```swift
/// try database.write { db in
///     try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["hello"])
///     let count = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note")
/// }
/// ```
public final class Connection {
    /// The database file path (`:memory:` for in-memory databases).
    public let path: String
    /// The SQLite connection handle, for calls Coffer does not wrap.
    public let handle: OpaquePointer
    package let logger: Logger
    private var statementCache: [String: Statement] = [:]
    /// The cached statement last used for each SQL length (modulo the slot count): a repeated call finds
    /// its statement by one string comparison, which is a compare of two words when the caller passes
    /// the same string again, instead of hashing the whole SQL for the dictionary. Only touched by this
    /// connection's one thread at a time, so the dynamic exclusivity check is skipped.
    @exclusivity(unchecked) private var recentStatements: [Statement?] = Array(
        repeating: nil, count: Connection.recentSlotCount)
    private static let recentSlotCount = 16
    /// Statements that record writes keep per record type and purpose (see ``recordStatement(for:purpose:sql:)``),
    /// and the one used last, checked first.
    private var recordStatements: [RecordStatementKey: Statement] = [:]
    @exclusivity(unchecked) private var lastRecordStatement: (key: RecordStatementKey, statement: Statement)?
    /// `BEGIN …` of each ``TransactionKind`` and `COMMIT`, prepared on first use and run directly.
    @exclusivity(unchecked) private var transactionStatements: [Statement?] = Array(repeating: nil, count: 4)
    /// Statements of prepared queries, indexed by the query's shape identifier (see ``PreparedQuery``;
    /// identifiers are small and dense), so a lookup is an array access. Like the properties above, this
    /// and `faults` and `snapshotStamp` below are touched by one thread at a time, the one holding the
    /// connection (the writer's queue or a reader checkout): no dynamic exclusivity check on each read.
    @exclusivity(unchecked) private var preparedQueryStatements: [Statement?] = []
    private var savepointDepth = 0
    /// Relationships lazily loaded in the open transaction (see `Connection+CurrentTransaction.swift`).
    @exclusivity(unchecked) package var faults = FaultCache()
    /// True once ``close()`` ran: the handle must not be used again.
    private(set) var isClosed = false
    /// Told about every error this connection produces (the database uses it to report corruption).
    var errorObserver: ((CofferError) -> Void)?
    /// Set for an encrypted connection on SQLCipher 4, whose codec keeps a page's failed authentication as a
    /// deferred error: every later page read on the connection fails with `SQLITE_NOMEM` ("out of memory").
    /// Such a failure after corruption is reported as the corruption it is (see ``failure(code:sql:)``).
    /// Set once when the connection opens; read by the pool at every check-in (unchecked: the dynamic
    /// exclusivity check would cost more than the read).
    @exclusivity(unchecked) package var codecErrorsAreSticky = false
    /// True once a statement on this connection reported corruption (`SQLITE_CORRUPT`, `SQLITE_NOTADB`); the
    /// reader pool replaces such a connection when its codec errors are sticky.
    /// Written and read only by the thread that holds the connection.
    @exclusivity(unchecked) package private(set) var sawCorruption = false
    /// The database's transaction observers, on its writer connections only (nil elsewhere): told by
    /// ``inTransaction(_:_:)``.
    package var transactionObservers: TransactionObservers?
    /// The lock-wait trace's busy handler (a `BusyWaiter`, see `Connection+BusyWait.swift`) while
    /// ``Monitoring/lockWaits`` is on, kept here because SQLite holds it unretained; nil otherwise.
    var busyWaiter: AnyObject?
    /// `SELECT 1`, stepped once and left unreset while a cancellable call runs (see ``holdInterrupts()``).
    @exclusivity(unchecked) private var interruptHold: OpaquePointer?
    /// Called once by ``close()`` before the handle closes (the database's interrupt registry lets go of it).
    var willClose: (() -> Void)?
    /// Whoever listens to SQLite's statement trace on this connection (see `addTraceListener`).
    let traceListeners = TraceListeners()
    /// Statements and rows this connection ran and returned (monitoring's metrics).
    let stepCounter = StepCounter()
    /// The database's commit counter and this connection's read transaction's place in it (record cache).
    package var commitClock: CommitClock?
    @usableFromInline @exclusivity(unchecked) package var snapshotStamp = SnapshotStamp()
    /// What the clock's attachment keeps on this connection (the record cache's stores), found lock-free.
    @usableFromInline @exclusivity(unchecked) package var attachmentView = AttachmentView()
    /// The connection's compression state (its zstd contexts and dictionary cache), set when the
    /// compression functions are registered; the `Compression` folder owns what it holds.
    package var compressionState: AnyObject?
    /// The generation of the database's `ConnectionSetup` this connection last ran (0: none yet).
    @exclusivity(unchecked) package var setupGeneration = 0
    /// The reader pool's slot for the thread this reader was last handed to, where its check-in parks it
    /// (see `ParkedReaders`).
    @exclusivity(unchecked) var parkingSlot = 0
    /// The live migrations this connection reads through a union view, by target table name (filled by
    /// CofferRecords' `LiveMigration`; empty on almost every connection, so checking it costs nothing).
    @exclusivity(unchecked) package var liveMigrationTables: [String: AnyObject] = [:]

    /// ``liveMigrationTables``'s entry for `table`, read here: another module's direct read of the property
    /// is checked for exclusive access at run time despite its attribute (about 180 instructions a call,
    /// on every record write).
    package func liveMigrationEntry(for table: String) -> AnyObject? {
        liveMigrationTables.isEmpty ? nil : liveMigrationTables[table]
    }

    /// Opens `path`; `immutable` opens it through the URI `file://…?immutable=1` (read-only, no locks,
    /// no WAL or journal: see ``Configuration/opensImmutable``), keeping `path` as the connection's path.
    package init(path: String, flags: Int32, logger: Logger, vfs: String? = nil, immutable: Bool = false) throws {
        var handle: OpaquePointer?
        let code =
            immutable
            ? sqlite3_open_v2(
                Self.immutableURI(path), &handle,
                (flags & ~(SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE)) | SQLITE_OPEN_READONLY | SQLITE_OPEN_URI
                    | SQLITE_OPEN_NOMUTEX, vfs)
            : sqlite3_open_v2(path, &handle, flags | SQLITE_OPEN_NOMUTEX, vfs)
        guard code == SQLITE_OK, let handle else {
            let error = CofferError.lastError(of: handle, code: code, sql: nil)
            sqlite3_close_v2(handle)
            throw error
        }
        sqlite3_extended_result_codes(handle, 1)
        self.path = path
        self.handle = handle
        self.logger = logger
    }

    deinit { close() }

    /// `file://` + the absolute path, with `%`, `?` and `#` escaped (the bytes SQLite's URI parser
    /// would read as an escape, the query or the fragment), + `?immutable=1`.
    static func immutableURI(_ path: String) -> String {
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        var escaped = ""
        for character in absolute.unicodeScalars {
            switch character {
            case "%": escaped += "%25"
            case "?": escaped += "%3f"
            case "#": escaped += "%23"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return "file://" + escaped + "?immutable=1"
    }

    /// Finalizes cached statements and closes the handle. Safe to call twice.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        statementCache.removeAll()
        recentStatements = []
        transactionStatements = []
        recordStatements.removeAll()
        lastRecordStatement = nil
        preparedQueryStatements.removeAll()
        sqlite3_finalize(interruptHold)
        interruptHold = nil
        willClose?()
        willClose = nil
        sqlite3_close_v2(handle)
    }

    /// Keeps an `sqlite3_interrupt` in force until ``releaseInterrupts()``: SQLite forgets an interrupt when
    /// a statement starts while none is running, so a cancel between two statements of a closure would be
    /// lost and the rest of the closure would run. A statement left running (`SELECT 1`, stepped to its
    /// row, reading nothing and taking no lock) makes every statement after the interrupt fail at once
    /// with `SQLITE_INTERRUPT`. Costs one step per call; nothing per statement. Returns false when the
    /// statement could not be prepared or stepped (the call then runs as before).
    package func holdInterrupts() -> Bool {
        if interruptHold == nil {
            var statement: OpaquePointer?
            guard sqlite3_prepare_v2(handle, "SELECT 1", -1, &statement, nil) == SQLITE_OK else {
                sqlite3_finalize(statement)
                return false
            }
            interruptHold = statement
        }
        guard sqlite3_step(interruptHold) == SQLITE_ROW else {
            sqlite3_reset(interruptHold)
            return false
        }
        return true
    }

    /// Ends ``holdInterrupts()``: once no statement runs, SQLite clears an interrupt at the next one
    /// (the transaction's `COMMIT` or `ROLLBACK`).
    package func releaseInterrupts() {
        sqlite3_reset(interruptHold)
    }

    /// Builds the error for a failed call and tells the observer.
    @usableFromInline
    package func failure(code: Int32, sql: String?) -> CofferError {
        var error = CofferError.lastError(of: handle, code: code, sql: sql)
        if error.isCorruption {
            sawCorruption = true
        } else if sawCorruption && codecErrorsAreSticky && code & 0xff == SQLITE_NOMEM {
            error = CofferError(
                code: .corrupt,
                message:
                    "database disk image is malformed (a page failed authentication earlier on this connection; SQLCipher 4 reports every read after it as out of memory)",
                sql: sql)
        }
        errorObserver?(error)
        return error
    }

    // MARK: Statements

    /// A prepared statement for `sql`, reused across calls. The statement is reset and ready to bind.
    ///
    /// When the cached statement is still in use (a cursor over it is open), a fresh one is prepared.
    public func cachedStatement(sql: String) throws -> Statement {
        let slot = sql.utf8.count & (Self.recentSlotCount - 1)
        if slot < recentStatements.count, let recent = recentStatements[slot], recent.sql == sql, !recent.isInUse {
            recent.reset()
            return recent
        }
        if let statement = statementCache[sql], !statement.isInUse {
            statement.reset()
            if slot < recentStatements.count { recentStatements[slot] = statement }
            return statement
        }
        let statement = try makeStatement(sql: sql)
        if statementCache[sql] == nil {
            statementCache[sql] = statement
            if slot < recentStatements.count { recentStatements[slot] = statement }
        }
        return statement
    }

    /// The statement a record type keeps for `purpose` (an insert with a given conflict resolution…),
    /// marked in use: the caller clears ``Statement/isInUse`` when done. `sql` renders its SQL on first
    /// use only, so a record write neither builds nor hashes SQL; a fresh, uncached statement when the
    /// kept one is in use.
    package func recordStatement(for type: Any.Type, purpose: Int, sql: () throws -> String) throws -> Statement {
        let key = RecordStatementKey(type: ObjectIdentifier(type), purpose: purpose)
        let statement: Statement
        if let last = lastRecordStatement, last.key == key, !last.statement.isInUse {
            statement = last.statement
        } else if let kept = recordStatements[key], !kept.isInUse {
            statement = kept
            lastRecordStatement = (key, kept)
        } else if recordStatements[key] == nil {
            guard !isClosed else { throw CofferError(code: .apiMisuse, message: "the connection is closed") }
            statement = try makeStatement(sql: try sql())
            recordStatements[key] = statement
            lastRecordStatement = (key, statement)
        } else {
            statement = try makeStatement(sql: try sql())
        }
        statement.isInUse = true
        return statement
    }

    /// The statement of the prepared query shape `id` (SQL `sql`), prepared on first use on this
    /// connection and kept; a fresh, uncached one when the kept one is in use (a cursor over it is open).
    /// Returned marked in use: the caller gives it back with ``Statement/checkIn()``.
    package func preparedQueryStatement(id: Int, sql: String) throws -> Statement {
        guard !isClosed else {
            throw CofferError(code: .apiMisuse, message: "the connection is closed", sql: sql)
        }
        let statement: Statement
        if id < preparedQueryStatements.count, let kept = preparedQueryStatements[id] {
            statement = kept.isInUse ? try makeStatement(sql: sql) : kept
        } else {
            statement = try makeStatement(sql: sql)
            if id >= preparedQueryStatements.count {
                preparedQueryStatements.append(contentsOf: repeatElement(nil, count: id + 1 - preparedQueryStatements.count))
            }
            preparedQueryStatements[id] = statement
        }
        statement.isInUse = true
        return statement
    }

    /// Prepares a new statement that is not cached.
    public func makeStatement(sql: String) throws -> Statement {
        logger.trace("prepare", metadata: ["sql": "\(sql)"])
        return try Statement(connection: self, sql: sql)
    }

    /// Runs `body` with a cached statement bound to `arguments`, marking it in use meanwhile.
    package func withStatement<T>(sql: String, arguments: StatementArguments, _ body: (Statement) throws -> T) throws -> T {
        let statement = try cachedStatement(sql: sql)
        statement.isInUse = true
        defer { statement.isInUse = false }
        return try statement.withBound(arguments) { try body(statement) }
    }

    // MARK: Executing

    /// Executes one statement, binding `arguments` to its `?` parameters.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        try withStatement(sql: sql, arguments: arguments) { statement in
            while try statement.step() {}
        }
    }

    /// Executes several `;`-separated statements that take no arguments (schema scripts).
    public func executeScript(_ sql: String) throws {
        logger.trace("script", metadata: ["sql": "\(sql)"])
        var message: UnsafeMutablePointer<CChar>?
        let code = sqlite3_exec(handle, sql, nil, nil, &message)
        sqlite3_free(message)
        guard code == SQLITE_OK else { throw failure(code: code, sql: sql) }
    }

    /// All rows of a query.
    public func fetchAll(sql: String, arguments: StatementArguments = []) throws -> [Row] {
        try withStatement(sql: sql, arguments: arguments) { statement in
            var rows: [Row] = []
            while try statement.step() { rows.append(statement.row()) }
            return rows
        }
    }

    /// The first row of a query, or nil.
    public func fetchOne(sql: String, arguments: StatementArguments = []) throws -> Row? {
        try withStatement(sql: sql, arguments: arguments) { statement in
            try statement.step() ? statement.row() : nil
        }
    }

    /// The first column of the first row, converted to `Value`; nil when there is no row or it is NULL.
    public func fetchValue<Value: DatabaseValueConvertible>(
        _ type: Value.Type = Value.self, sql: String, arguments: StatementArguments = []
    ) throws -> Value? {
        try withStatement(sql: sql, arguments: arguments) { statement in
            guard try statement.step(), !statement.isNull(at: 0) else { return nil }
            return try statement.decode(Value.self, at: 0)
        }
    }

    /// Iterates over the rows of a query without collecting them, so memory stays flat.
    ///
    /// The statement is positioned on each row while `body` runs; read its columns directly.
    public func forEachRow(
        sql: String, arguments: StatementArguments = [], _ body: (Statement) throws -> Void
    ) throws {
        try withStatement(sql: sql, arguments: arguments) { statement in
            while try statement.step() { try body(statement) }
        }
    }

    // MARK: State

    /// The rowid of the last successful INSERT on this connection.
    public var lastInsertedRowID: Int64 { sqlite3_last_insert_rowid(handle) }

    /// The number of rows changed by the last INSERT, UPDATE or DELETE.
    public var changesCount: Int { Int(sqlite3_changes(handle)) }

    /// True while a transaction is open on this connection.
    public var isInsideTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    // MARK: Transactions

    /// How a transaction takes its locks.
    public enum TransactionKind: String, Sendable {
        /// Locks on first read or write.
        case deferred = "DEFERRED"
        /// Takes the write lock at once (Coffer's writes).
        case immediate = "IMMEDIATE"
        /// Takes an exclusive lock at once.
        case exclusive = "EXCLUSIVE"

        /// The statement that begins it: a constant, so that a transaction builds no string.
        var beginSQL: String {
            switch self {
            case .deferred: return "BEGIN DEFERRED TRANSACTION"
            case .immediate: return "BEGIN IMMEDIATE TRANSACTION"
            case .exclusive: return "BEGIN EXCLUSIVE TRANSACTION"
            }
        }

        /// Where the connection keeps the kind's `BEGIN` statement.
        var statementSlot: Int {
            switch self {
            case .deferred: return 0
            case .immediate: return 1
            case .exclusive: return 2
            }
        }

        static let commitSQL = "COMMIT TRANSACTION"
        /// Where the connection keeps its `COMMIT` statement.
        static let commitSlot = 3
    }

    /// Runs `body` in a transaction: commits when it returns, rolls back when it throws.
    ///
    /// On a database's writer, its ``TransactionObserver``s are told: ``TransactionObserver/willCommit(_:)``
    /// before `COMMIT` (an error it throws rolls the transaction back and is thrown here), then
    /// ``TransactionObserver/didCommit(_:)`` or ``TransactionObserver/didRollback(_:)``.
    public func inTransaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        try runTransactionStatement(kind.statementSlot, sql: kind.beginSQL)
        let result: T
        do {
            result = try asCurrentTransaction(body)
            // Looked up after the body: an observer it added judges this transaction.
            try observers(of: kind)?.willCommit(self)
            try runTransactionStatement(TransactionKind.commitSlot, sql: TransactionKind.commitSQL)
        } catch {
            rollbackIfNeeded()
            observers(of: kind)?.didRollback(self)
            throw error
        }
        observers(of: kind)?.didCommit(self)
        return result
    }

    /// The transaction observers to tell about a transaction of `kind`: nil unless something observes the
    /// writer's transactions (read transactions are not observed), a load or two.
    @inline(__always)
    private func observers(of kind: TransactionKind) -> TransactionObservers? {
        guard kind != .deferred, let observers = transactionObservers, !observers.isEmpty else { return nil }
        return observers
    }

    /// Runs the kept `BEGIN` or `COMMIT` statement in `slot`, preparing it on first use: a transaction
    /// looks up no statement and binds nothing.
    private func runTransactionStatement(_ slot: Int, sql: String) throws {
        guard slot < transactionStatements.count else {
            throw CofferError(code: .apiMisuse, message: "the connection is closed", sql: sql)
        }
        let statement: Statement
        if let kept = transactionStatements[slot] {
            statement = kept
        } else {
            statement = try makeStatement(sql: sql)
            transactionStatements[slot] = statement
        }
        defer { statement.reset() }
        while try statement.step() {}
    }

    /// Runs `body` in a savepoint, which nests: its changes are released into the enclosing transaction
    /// when it returns and rolled back alone when it throws.
    ///
    /// ```swift
    /// try database.write { db in
    ///     try db.execute(sql: "INSERT INTO t VALUES (1)")
    ///     try? db.savepoint {
    ///         try db.execute(sql: "INSERT INTO t VALUES (2)")
    ///         throw CancellationError()   // only row 2 is rolled back
    ///     }
    /// }
    /// ```
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "coffer_savepoint_\(savepointDepth)"
        try execute(sql: "SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            // Rolling back to a savepoint keeps it on the stack: release it too.
            faults.removeAll()
            try? execute(sql: "ROLLBACK TO SAVEPOINT \(name)")
            try? execute(sql: "RELEASE SAVEPOINT \(name)")
            throw error
        }
        try execute(sql: "RELEASE SAVEPOINT \(name)")
        return result
    }

    /// Runs `body` atomically: in a savepoint inside an open transaction, else in its own transaction.
    package func inSavepointOrTransaction<T>(_ body: () throws -> T) throws -> T {
        isInsideTransaction ? try savepoint(body) : try inTransaction(.immediate, body)
    }

    /// Rolls back the open transaction, if any, ignoring errors (SQLite may have rolled back already).
    package func rollbackIfNeeded() {
        if isInsideTransaction { try? execute(sql: "ROLLBACK TRANSACTION") }
    }
}

/// Which statement a record type keeps: the type and what the statement does.
struct RecordStatementKey: Hashable {
    let type: ObjectIdentifier
    let purpose: Int
}
