import Foundation
import Logging

/// Everything a ``Database`` is opened with.
///
/// ```swift
/// var configuration = Configuration(encryption: .passphrase("secret"))
/// configuration.readerCount = 2
/// configuration.synchronous = .full
/// let database = try Database(path: "app.db", configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// The encryption. Default ``Encryption/none``.
    public var encryption: Encryption
    /// Cipher settings, used when ``encryption`` is not `.none`.
    public var cipher: CipherOptions
    /// Maximum number of reader connections. Default 4; 0 runs reads on the writer.
    public var readerCount: Int
    /// The durability of commits. Default ``SynchronousMode/normal``.
    public var synchronous: SynchronousMode
    /// How long a connection waits for a lock before SQLITE_BUSY. Default 5 seconds.
    public var busyTimeout: TimeInterval
    /// Whether foreign keys are enforced. Default true.
    public var foreignKeysEnabled: Bool
    /// WAL size, in pages, past which a background PASSIVE checkpoint runs. Default 1000 (about 4 MB);
    /// eight times that while a live migration's worker writes, whose frames would otherwise set off most
    /// catch-up checkpoints on the writer (see <doc:LiveMigration>).
    public var checkpointThreshold: Int
    /// Seconds without commits after which the WAL is checkpointed and truncated. Default 2.
    public var idleCheckpointDelay: TimeInterval
    /// SQLite page-cache size per connection, in KiB. Default 2048 (2 MiB, SQLite's own default): each
    /// connection — the writer, up to ``readerCount`` readers, the checkpointer — grows its cache up to
    /// this as it reads, so one database can take up to (readerCount + 2) × this, 12 MiB by default.
    /// Commits empty the readers' caches; the process-wide ``DecryptedPageCache`` keeps what they lose.
    /// Raise it for a big, read-mostly hot set; see the README's performance section.
    public var cacheSizeKiB: Int
    /// Where SQLite keeps temporary data: sort runs of `CREATE INDEX` and `ORDER BY`, temporary tables,
    /// statement journals. Default ``TemporaryStorage/memory``.
    public var temporaryStorage: TemporaryStorage
    /// Opens an existing file without writing to it: no WAL switch, no writes, no checkpoints (SQLite may
    /// still create `-wal`/`-shm` beside a WAL-mode file). Default false.
    public var readOnly: Bool
    /// Where Coffer logs (SQL at trace level; never values, keys or passphrases).
    public var logger: Logger
    /// Called once, on an arbitrary thread, the first time a statement meets SQLITE_CORRUPT or
    /// SQLITE_NOTADB on this database after it opened fine.
    public var onCorruption: (@Sendable (CorruptionEvent) -> Void)?
    /// Run on the writer at open, before any other access (``Configuration/recordTypes`` sets it).
    package var openPreparation: OpenPreparation?
    /// Opens the file as SQLite's `immutable=1` does (with ``readOnly``): read-only, without locks, without
    /// a WAL or journal, so that nothing beside the file is created or changed. Only for a file nothing
    /// else writes while it is open, with no `-wal` or `-journal` beside it: a WAL's frames would be
    /// ignored (what `verify` and `info` check before using it; see `InputCopy.withView`).
    package var opensImmutable = false
    /// While something observes the database (``Database/observe(options:_:)``), how often, in seconds,
    /// Coffer looks for commits made by other processes; 0 turns that off.
    public var externalChangeLatency: TimeInterval
    /// Statement traces, metrics, writer-wait traces and spans. Default: all off (see ``Monitoring``).
    public var monitoring: Monitoring

    /// Creates a configuration.
    public init(encryption: Encryption = .none, cipher: CipherOptions = CipherOptions()) {
        self.encryption = encryption
        self.cipher = cipher
        self.readerCount = 4
        self.synchronous = .normal
        self.busyTimeout = 5
        self.foreignKeysEnabled = true
        self.checkpointThreshold = 1000
        self.idleCheckpointDelay = 2
        self.cacheSizeKiB = 2048
        self.temporaryStorage = .memory
        self.readOnly = false
        self.logger = Logger(label: "coffer")
        self.onCorruption = nil
        self.openPreparation = nil
        self.externalChangeLatency = 0.1
        self.monitoring = Monitoring()
    }
}

/// Where SQLite keeps temporary data. Either way, no plaintext reaches the disk.
///
/// ```swift
/// var configuration = Configuration(encryption: .passphrase("secret"))
/// configuration.temporaryStorage = .encryptedFiles   // a big CREATE INDEX sorts in bounded memory
/// ```
public enum TemporaryStorage: Sendable {
    /// In memory (`PRAGMA temp_store = MEMORY`): nothing temporary touches the disk, and a sort holds
    /// everything it sorts in memory — an index build over millions of rows can take hundreds of MB.
    case memory
    /// In temporary files encrypted with AES-256-CTR under a random key per file, drawn when the file is
    /// opened and never stored (`PRAGMA temp_store = FILE` through Coffer's wrapping VFS): a sort spills
    /// runs to disk once it holds about the page cache's size, so its memory stays bounded. Database,
    /// WAL and journal files are untouched by this VFS (SQLCipher encrypts them itself).
    case encryptedFiles
}

/// SQLite's `PRAGMA synchronous` in WAL mode.
public enum SynchronousMode: String, Sendable {
    /// Commits survive a process crash; a power cut may lose the last transactions, never consistency.
    case normal = "NORMAL"
    /// Every commit is fsynced: nothing acknowledged is lost on power cut.
    case full = "FULL"
    /// No syncs at all (tests and caches only).
    case off = "OFF"
}

/// What the ``Configuration/onCorruption`` handler receives.
public struct CorruptionEvent: Sendable {
    /// The database path.
    public let path: String
    /// The SQL that met the corruption, if any.
    public let sql: String?
    /// The error SQLite reported.
    public let error: CofferError
}
