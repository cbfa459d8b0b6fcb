import CSQLCipher
import CofferFormat
import Foundation

/// An encrypted SQLite database in WAL mode: one serialized writer, a pool of snapshot readers.
///
/// ```swift
/// let database = try Database(
///     path: "app.db",
///     configuration: Configuration(encryption: .passphrase("correct horse battery staple")))
///
/// try database.write { db in
///     try db.execute(sql: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, text TEXT)")
///     try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["hello"])
/// }
/// let count = try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
/// ```
///
/// - `write` runs one `BEGIN IMMEDIATE` transaction on the writer's queue: it commits when the closure
///   returns and rolls back when it throws. Writes are serialized.
/// - `read` runs on one of up to ``Configuration/readerCount`` reader connections, inside a read
///   transaction: the closure sees one snapshot however many commits happen meanwhile. Reads run
///   concurrently with each other and with the writer.
/// - Each has an `async` twin that never blocks the calling task's thread.
public final class Database: Sendable {
    /// The file path (`:memory:` for in-memory databases).
    public let path: String
    /// The configuration the database was opened with, its secret removed: Coffer keeps only the
    /// derived key (in memory that is zeroed on release), not the passphrase. For an existing encrypted
    /// file, `cipher.pageSize` is the one the file was found to use; ``keyDerivation`` is the derivation.
    public let configuration: Configuration
    package let factory: ConnectionFactory
    package let writer: SerializedConnection
    package let readers: ReaderPool?
    /// The readers when a read of one statement may run outside any transaction: nil in memory, without
    /// readers, or with spans on (see `checkOutStatementReader`).
    let statementReaders: ReaderPool?
    package let checkpointer: Checkpointer?
    /// Where the writer's WAL commits are reported, and the gate every checkpoint takes (see Backup).
    package let commitHook: WALCommitHook
    /// Change observation: commit hooks on the writer, subscribers, the other-process poller.
    package let observation: ObservationCenter
    /// Spans around transactions and long work, when ``Monitoring/spans`` is on.
    package let spans: DatabaseSpans?
    /// This database's place among those whose sizes cap the decrypted-page cache (encrypted files only).
    private let cacheSizeToken: UUID?
    /// The hold on the file that keeps every descriptor Coffer opens on it, its `-wal` and its `-shm` open
    /// until this database's connections have closed (see CofferFormat's `DescriptorTable`). Nil in memory.
    package let fileHold: DatabaseFileHold?
    /// What every connection runs before its next transaction once a higher layer asks (live migrations).
    package let connectionSetup = ConnectionSetup()
    private let state: CloseState

    /// Opens (creating if needed) the database at `path`.
    ///
    /// - Throws: ``CofferError/wrongPassphrase`` when the key does not decrypt an existing file (the file
    ///   is left untouched), ``CofferError/invalidConfiguration`` for bad cipher options, or the SQLite
    ///   error that prevented opening.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(path: path, configuration: configuration, removingOnClose: nil)
    }

    /// Opens `path` with a key already derived for it (or for a byte-for-byte copy of it): a check that
    /// read the file's key for its own page scan opens its SQLite connection without deriving again.
    /// Nil, or a plaintext configuration, derives as ``init(path:configuration:)`` does.
    package convenience init(path: String, configuration: Configuration, derivedKey: DatabaseKey?) throws {
        try self.init(path: path, configuration: configuration, removingOnClose: nil, derivedKey: derivedKey)
    }

    init(path: String, configuration: Configuration, removingOnClose directory: URL?, derivedKey: DatabaseKey? = nil) throws {
        if configuration.encryption.isEncrypted { try configuration.cipher.validate() }
        if configuration.readOnly && !FileManager.default.fileExists(atPath: path) {
            throw CofferError(code: .fileNotFound, message: "no database at \(path)")
        }
        // A read-only open must not let SQLite's checkpoint-on-close grow the file to what a damaged WAL
        // claims (writable opens skip this scan: it reads the whole WAL).
        if configuration.readOnly, let claim = try WALScan.impossibleClaim(databasePath: path) {
            throw CofferError(code: .corrupt, message: "\(path) is damaged: \(claim)")
        }
        let isMemory = path == ":memory:"
        // Before anything reads the file or a connection takes a lock on it: from here until `close()`, no
        // descriptor of this file is closed in this process behind SQLite's back (closing one would drop
        // the locks of every connection of the process, this database's and any other's on the same file).
        let fileHold: DatabaseFileHold?
        do { fileHold = isMemory ? nil : try DatabaseFileHold(path: path, creating: !configuration.readOnly) } catch {
            throw CofferError(code: .cantOpen, message: "cannot open \(path)")
        }
        let key =
            isMemory || !configuration.encryption.isEncrypted
            ? nil : try derivedKey ?? DatabaseKey.make(for: configuration.encryption, path: path, options: configuration.cipher)
        var configuration = configuration
        configuration.encryption = configuration.encryption.redacted
        if let key {
            // The file's own page size (CipherDetection), which backups and inspection must use.
            configuration.cipher.pageSize = key.pageSize
        }
        let corruption = CorruptionReporter(path: path, handler: configuration.onCorruption)
        let factory = ConnectionFactory(path: path, configuration: configuration, key: key, corruption: corruption)
        let writerConnection = try factory.open(.writer)
        // Before any reader opens or any caller runs: the first write and first read see the schema.
        if let preparation = configuration.openPreparation, !configuration.readOnly {
            try preparation.apply(on: writerConnection, path: path)
        }
        let waitTrace = WriterWaitTrace.make(
            for: configuration.monitoring, logger: configuration.logger, metrics: factory.metrics)
        let writer = SerializedConnection(connection: writerConnection, label: "coffer.writer", waitTrace: waitTrace)
        self.path = path
        self.configuration = configuration
        self.fileHold = fileHold
        self.factory = factory
        self.writer = writer
        self.commitHook = WALCommitHook(metrics: factory.metrics)
        self.state = CloseState(removingOnClose: directory)
        let spans = DatabaseSpans.make(for: configuration.monitoring, path: path)
        self.spans = spans
        self.observation = ObservationCenter(
            writer: writer, externalLatency: isMemory ? 0 : configuration.externalChangeLatency)
        let pooled = !isMemory && configuration.readerCount > 0
        let readers = pooled ? ReaderPool(capacity: configuration.readerCount) { try factory.open(.reader) } : nil
        self.readers = readers
        self.statementReaders = spans == nil ? readers : nil
        if isMemory || configuration.readOnly {
            self.checkpointer = nil
        } else {
            let checkpointer = Checkpointer(
                writer: writer, path: path, threshold: configuration.checkpointThreshold,
                idleDelay: configuration.idleCheckpointDelay, writerBusyTimeout: configuration.busyTimeout,
                hook: commitHook,
                refreshesCacheCap: configuration.encryption.isEncrypted, metrics: factory.metrics
            ) { try factory.open(.checkpointer) }
            self.checkpointer = checkpointer
            try writer.sync { checkpointer.install(on: $0) }
        }
        let encryptedFile = !isMemory && configuration.encryption.isEncrypted
        self.cacheSizeToken = encryptedFile ? DecryptedPageCache.OpenFiles.shared.add(path) : nil
        factory.clock.owner = self
    }

    /// An in-memory database, for tests and caches. It has one connection: reads run on the writer.
    public static func inMemory(configuration: Configuration = Configuration()) throws -> Database {
        var configuration = configuration
        configuration.encryption = .none
        return try Database(path: ":memory:", configuration: configuration)
    }

    /// A database in a new temporary directory, encrypted with a random key that is never stored, and
    /// deleted when closed: a disk-backed cache that leaves nothing readable behind.
    public static func temporary(configuration: Configuration = Configuration()) throws -> Database {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("coffer-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var configuration = configuration
        var generator = SystemRandomNumberGenerator()
        configuration.encryption = .rawKey(Data((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }))
        return try Database(
            path: directory.appendingPathComponent("temporary.db").path,
            configuration: configuration, removingOnClose: directory)
    }

    deinit { try? close() }

    /// How this database's page key was derived from its passphrase: the derivation under which the file
    /// authenticated at open (or that created it), updated by ``changePassphrase(to:keyDerivation:)``;
    /// nil for raw keys and plaintext.
    ///
    /// ```swift
    /// if database.keyDerivation == .sqlcipher3 {
    ///     try database.changePassphrase(to: .passphrase(passphrase), keyDerivation: .coffer)
    /// }
    /// ```
    public var keyDerivation: KeyDerivation? { factory.key?.derivation }

    /// The encryption unredacted, for calls that need the passphrase itself (repair material, restore,
    /// repair); ``configuration`` holds the redacted form. SPI: for Coffer's own modules only.
    package var unredactedEncryption: Encryption { factory.key?.encryption ?? .none }

    // MARK: Reading and writing

    /// Runs `body` in a read transaction on a reader connection: it sees one consistent snapshot.
    public func read<T>(_ body: (Connection) throws -> T) throws -> T {
        if let spans { return try spans.run("coffer.read") { try readTransaction(body) } }
        return try readTransaction(body)
    }

    private func readTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        guard let readers else {
            return try writer.sync { connection in
                try connectionSetup.prepare(connection)
                return try connection.inTransaction(.deferred) { try body(connection) }
            }
        }
        return try readers.withReader { connection in
            try connectionSetup.prepare(connection)
            return try connection.inTransaction(.deferred) {
                connection.stampReadTransaction()
                return try body(connection)
            }
        }
    }

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction on the writer: commits when it returns, rolls
    /// back when it throws.
    public func write<T>(_ body: (Connection) throws -> T) throws -> T {
        if let spans { return try spans.run("coffer.write") { try writeTransaction(body) } }
        return try writeTransaction(body)
    }

    private func writeTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try writer.sync("write(_:)") { connection in
            try connectionSetup.prepare(connection)
            return try connection.inTransaction(.immediate) { try body(connection) }
        }
    }

    /// Runs `body` on the writer outside any transaction (each statement commits on its own, or manage
    /// transactions yourself). A transaction left open when `body` returns is rolled back and reported.
    public func writeWithoutTransaction<T>(_ body: (Connection) throws -> T) throws -> T {
        try writer.sync { connection in
            try connectionSetup.prepare(connection)
            let result = try body(connection)
            if connection.isInsideTransaction {
                connection.rollbackIfNeeded()
                throw CofferError(
                    code: .apiMisuse, message: "writeWithoutTransaction left a transaction open; it was rolled back")
            }
            return result
        }
    }

    /// Async ``read(_:)``: runs on a background thread, never blocking the caller's.
    ///
    /// Cancelling the task interrupts the statement running for it (`sqlite3_interrupt` on its
    /// connection, and on no other use of it), and every statement `body` starts after that fails at once;
    /// the call throws `CancellationError`. A task cancelled before the read starts throws without running
    /// `body`. The reader goes back to the pool ready for
    /// the next read.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await CancellationLatch.call { latch, complete in
            DispatchQueue.global(qos: .userInitiated).async {
                complete(Result { try self.read { connection in try latch.run(on: connection) { try body(connection) } } })
            }
        }
    }

    /// Async ``write(_:)``: queued on the writer without blocking the caller's thread.
    ///
    /// Cancelling the task interrupts the statement running for it, every statement `body` starts after
    /// that fails at once, and the call throws `CancellationError`: the transaction rolls back. A task cancelled while queued throws without
    /// running `body`; one cancelled after `body` returned and `COMMIT` started is committed.
    public func write<T: Sendable>(_ body: @escaping @Sendable (Connection) throws -> T) async throws -> T {
        try await CancellationLatch.call { latch, complete in
            self.writer.async { connection in
                complete(
                    Result {
                        guard let connection else { throw SerializedConnection.closedError }
                        try self.connectionSetup.prepare(connection)
                        return try self.spans.run("coffer.write") {
                            try connection.inTransaction(.immediate) {
                                try latch.run(on: connection) { try body(connection) }
                            }
                        }
                    })
            }
        }
    }

    // MARK: Checkpoints and closing

    /// SQLite's checkpoint modes.
    public enum CheckpointMode: Sendable {
        /// Copies what it can without waiting.
        case passive
        /// Copies everything and resets the WAL, waiting for readers.
        case truncate

        var rawValue: Int32 { self == .passive ? SQLITE_CHECKPOINT_PASSIVE : SQLITE_CHECKPOINT_TRUNCATE }
    }

    /// Runs `body` on the writer while holding the checkpoint gate: no transaction commits and no
    /// background, idle or backup-side checkpoint runs meanwhile, so the main file and the `-wal` stay as
    /// they are. Gate before writer, always: an incremental backup holds the gate and then waits for the
    /// writer. `operation` names the caller in writer-wait traces.
    package func syncHoldingCheckpoints<T>(
        _ operation: StaticString = #function, _ body: (Connection) throws -> T
    ) throws -> T {
        try commitHook.checkpointGate.withLock { try writer.sync(operation, body) }
    }

    /// Runs a checkpoint now on the writer.
    public func checkpoint(_ mode: CheckpointMode = .passive) throws {
        try syncHoldingCheckpoints { connection in
            let code = CheckpointCount.run(connection, mode: mode.rawValue, metrics: factory.metrics)
            guard code == SQLITE_OK else { throw connection.failure(code: code, sql: "PRAGMA wal_checkpoint") }
        }
        // The files' sizes changed: so does the decrypted-page cache's cap (see DecryptedPageCache).
        if mode == .truncate { DecryptedPageCache.OpenFiles.shared.trim() } else { DecryptedPageCache.OpenFiles.shared.refresh() }
    }

    /// Runs `handler` once when ``close()`` begins (or now, when the database is closed): background work of
    /// the layers above (a live migration's worker) stops waiting on a database that is going away.
    /// Keep it short and non-blocking: it runs on the closing thread before the connections close.
    package func onClose(_ handler: @escaping @Sendable () -> Void) { state.onClose(handler) }

    /// Waits for running reads and writes, truncates the WAL and closes every connection.
    /// Further calls throw ``CofferError/apiMisuse``. Closing twice is harmless.
    public func close() throws {
        guard state.markClosed() else { return }
        observation.close()
        readers?.close()
        factory.clock.clearAttachment(detaching: true)
        checkpointer?.suspend()
        let readOnly = configuration.readOnly
        let checkpointer = self.checkpointer
        let emptied = try syncHoldingCheckpoints { connection -> Bool in
            checkpointer?.uninstall(from: connection)
            if !readOnly && path != ":memory:" {
                return sqlite3_wal_checkpoint_v2(connection.handle, nil, SQLITE_CHECKPOINT_TRUNCATE, nil, nil) == SQLITE_OK
            }
            return false
        }
        writer.queue.sync { writer.replaceConnection(nil) }
        // The WAL is in the main file: the changed-page set can outlive this process (see Backup).
        if emptied { commitHook.walEmptiedAtClose(databasePath: path) }
        if let cacheSizeToken { DecryptedPageCache.OpenFiles.shared.remove(cacheSizeToken) }
        // Every connection is closed: no lock of this database's is left for a descriptor's close to drop.
        fileHold?.release()
        if let directory = state.directoryToRemove {
            try? FileManager.default.removeItem(at: directory)
        }
    }
}

/// Whether a database is closed, what to tell then, and what to delete.
final class CloseState: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var closed = false
    private var handlers: [@Sendable () -> Void] = []
    let directoryToRemove: URL?

    init(removingOnClose directory: URL?) { directoryToRemove = directory }

    /// Marks the database closed and runs the close handlers (outside the lock); false if it already was.
    func markClosed() -> Bool {
        let (first, handlers) = lock.withLock {
            defer {
                closed = true
                self.handlers = []
            }
            return (!closed, self.handlers)
        }
        for handler in handlers { handler() }
        return first
    }

    /// Runs `handler` when the database closes, or now when it is closed already.
    func onClose(_ handler: @escaping @Sendable () -> Void) {
        let now = lock.withLock {
            if !closed { handlers.append(handler) }
            return closed
        }
        if now { handler() }
    }
}
