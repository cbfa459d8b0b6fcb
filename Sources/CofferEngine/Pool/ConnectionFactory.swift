import CSQLCipher
internal import CofferPageCache
internal import CofferVFS
import Foundation

/// Opens the connections of one database, each keyed and configured for its role.
///
/// Order matters with SQLCipher: key first, then cipher settings, then a read that proves the key
/// (SQLCipher accepts any key until the first page is read), and only then PRAGMAs that may write.
package struct ConnectionFactory: Sendable {
    package enum Role {
        case writer, reader, checkpointer
    }

    let path: String
    let configuration: Configuration
    package let corruption: CorruptionReporter
    /// The database's metrics, when ``Monitoring/metrics`` is on.
    package let metrics: DatabaseMetrics?
    private let decryptions: DecryptionTally?
    private let keyHolder: DatabaseKeyHolder
    /// Shared by every connection opened here (see ``CommitClock``).
    let clock = CommitClock()
    /// The writer and readers opened here that are still open, for ``Database/interrupt()``.
    package let interrupts = InterruptRegistry()
    /// The database's transaction observers, set on every writer opened here (touched on its queue only).
    package let transactionObservers = TransactionObservers()

    package init(path: String, configuration: Configuration, key: DatabaseKey?, corruption: CorruptionReporter) {
        self.path = path
        self.configuration = configuration
        self.corruption = corruption
        self.metrics = DatabaseMetrics.make(for: configuration.monitoring, path: path)
        self.decryptions = metrics != nil && key != nil ? DecryptionTally() : nil
        self.keyHolder = DatabaseKeyHolder(key)
    }

    package var key: DatabaseKey? { keyHolder.key }

    /// Replaces the key after a rekey; connections opened afterwards use it.
    func replaceKey(_ key: DatabaseKey?) { keyHolder.key = key }

    package func open(_ role: Role) throws -> Connection {
        let readOnly = configuration.readOnly
        // Read-only opens read-write without CREATE plus `query_only`: SQLite 3.15 cannot open a WAL
        // file with SQLITE_OPEN_READONLY unless its -shm already exists.
        var flags = SQLITE_OPEN_READWRITE
        if role == .writer && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let connection = try Connection(
            path: path, flags: flags, logger: configuration.logger, vfs: try Self.vfsName(for: configuration.temporaryStorage),
            immutable: readOnly && configuration.opensImmutable)
        // Before the key's proving read, so a lock another process holds at open is waited for.
        connection.traceLockWaits(LockWaitTrace.make(for: configuration.monitoring, logger: configuration.logger))
        connection.setBusyTimeout(milliseconds: Int32(configuration.busyTimeout * 1000))
        do {
            try applyKey(to: connection, role: role)
            try configure(connection, role: role)
            try connection.registerFullTextSearch()
            try connection.registerCompression()
        } catch {
            connection.close()
            throw error
        }
        let reporter = corruption
        connection.errorObserver = { error in reporter.report(error) }
        connection.codecErrorsAreSticky = key != nil && LinkedSQLCipher.isVersion4
        connection.commitClock = clock
        if role != .checkpointer { interrupts.add(connection) }
        if role == .writer { connection.transactionObservers = transactionObservers }
        // After the key's proving read and the PRAGMAs: the trace starts with the caller's statements.
        if configuration.monitoring.monitorsStatements && role != .checkpointer {
            StatementMonitor.install(
                on: connection, monitoring: configuration.monitoring, metrics: metrics, decryptions: decryptions,
                onWriter: role == .writer)
        }
        return connection
    }

    /// The VFS a connection opens with: "coffer", which wraps the process's default VFS and writes a WAL
    /// file's frames with one call per commit (see `CofferVFS.h`), or, for encrypted temporary files, the
    /// VFS that encrypts them, over "coffer".
    private static func vfsName(for storage: TemporaryStorage) throws -> String {
        let encryptsTemporaryFiles = storage == .encryptedFiles
        let code = encryptsTemporaryFiles ? coffer_tempvfs_register() : coffer_vfs_register()
        guard code == SQLITE_OK else {
            throw CofferError(code: ResultCode(rawValue: code), message: "cannot register Coffer's VFS")
        }
        return encryptsTemporaryFiles ? COFFER_TEMP_VFS_NAME : COFFER_VFS_NAME
    }

    private func applyKey(to connection: Connection, role: Role) throws {
        guard let key = keyHolder.key else {
            try proveReadable(connection)
            return
        }
        // Once the file exists, the salt part of a new file's key spec must not be given again.
        let spec = role == .writer ? key.keySpec : key.existingFileSpec()
        // Keyed through the shared decrypted-page cache (see DecryptedPageCache).
        let code = spec.withUnsafeBytes {
            coffer_page_cache_key(UnsafeMutableRawPointer(connection.handle), $0.baseAddress, Int32($0.count))
        }
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: nil) }
        // The key is raw, so no kdf_iter; the page size and format are the file's own (see CipherDetection),
        // spelled out on SQLCipher 4, whose defaults are not Coffer's format (see LinkedSQLCipher).
        let pragmas = LinkedSQLCipher.pageFormatPragmas(
            format: key.pageFormat, pageSize: key.pageSize, usesHMAC: configuration.cipher.usesHMAC)
        try connection.executeScript(pragmas.joined(separator: "; "))
        try proveReadable(connection)
    }

    /// Reads the schema so a wrong key or a non-database fails here, before anything is written.
    private func proveReadable(_ connection: Connection) throws {
        do {
            _ = try connection.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master")
        } catch let error as CofferError where error.code.primary == .notADatabase && keyHolder.key != nil {
            let tried = keyHolder.key?.unprovenAfterTrying.map { " (\($0))" } ?? ""
            throw CofferError(
                code: .wrongPassphrase,
                message: "wrong passphrase or key: the file cannot be decrypted with it (or is not a database)\(tried)")
        }
    }

    private func configure(_ connection: Connection, role: Role) throws {
        let configuration = self.configuration
        var pragmas = [
            "PRAGMA temp_store = \(configuration.temporaryStorage == .memory ? "MEMORY" : "FILE")",
            "PRAGMA cache_size = -\(configuration.cacheSizeKiB)",
            "PRAGMA foreign_keys = \(configuration.foreignKeysEnabled ? "ON" : "OFF")",
        ]
        switch role {
        case .writer where !configuration.readOnly && path != ":memory:":
            pragmas.append("PRAGMA journal_mode = WAL")
            pragmas.append("PRAGMA synchronous = \(configuration.synchronous.rawValue)")
            // Bound the -wal file after each restart (see Checkpointer).
            let pageBytes = (configuration.encryption.isEncrypted ? configuration.cipher.pageSize : 4096) + 24
            pragmas.append("PRAGMA journal_size_limit = \(configuration.checkpointThreshold * pageBytes)")
        case .reader:
            pragmas.append("PRAGMA query_only = ON")
        case .writer where configuration.readOnly:
            pragmas.append("PRAGMA query_only = ON")
        case .checkpointer, .writer:
            break
        }
        if role == .checkpointer {
            // A checkpoint that cannot get its locks at once is retried later rather than waiting.
            connection.setBusyTimeout(milliseconds: 50)
        }
        try connection.executeScript(pragmas.joined(separator: "; "))
    }
}

/// The current key, swapped atomically on rekey.
private final class DatabaseKeyHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var current: DatabaseKey?
    init(_ key: DatabaseKey?) { current = key }
    var key: DatabaseKey? {
        get { lock.withLock { current } }
        set { lock.withLock { current = newValue } }
    }
}
