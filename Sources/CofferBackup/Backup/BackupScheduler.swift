import CofferEngine
import CofferRecords
import Dispatch
import Foundation

/// When and where a ``BackupScheduler`` backs a database up.
///
/// ```swift
/// var backups = BackupConfiguration(directory: URL(fileURLWithPath: "backups"))
/// backups.interval = 600              // every 10 minutes…
/// backups.changedPagesThreshold = 2000 // …or as soon as 2,000 pages changed
/// ```
public struct BackupConfiguration: Sendable {
    /// Where generations are written.
    public var directory: URL
    /// Seconds between backups; nil to back up only on ``changedPagesThreshold``. Default 3600.
    public var interval: TimeInterval?
    /// Back up as soon as this many distinct pages were committed since the last generation; nil to
    /// use the interval alone. Default nil.
    public var changedPagesThreshold: Int?
    /// Chains (a full generation and its increments) to keep. Default 2.
    public var generationsToKeep: Int
    /// Pages copied per step of a full backup. Default 256.
    public var pagesPerStep: Int
    /// Increments after which the next backup starts a new chain with a full copy. Default 24.
    public var incrementsPerChain: Int
    /// How often the page threshold is checked, in seconds. Default 0.5.
    public var pollInterval: TimeInterval

    /// A configuration writing to `directory` hourly, keeping two chains.
    public init(directory: URL) {
        self.directory = directory
        self.interval = 3600
        self.changedPagesThreshold = nil
        self.generationsToKeep = 2
        self.pagesPerStep = 256
        self.incrementsPerChain = 24
        self.pollInterval = 0.5
    }
}

/// Backs a database up periodically on a background queue: a full generation first, then increments,
/// a new chain every ``BackupConfiguration/incrementsPerChain`` increments, old chains pruned.
///
/// Failures never crash or throw into the app: they are logged and kept in ``status`` (a busy
/// database is simply retried at the next tick).
///
/// ```swift
/// let scheduler = BackupScheduler(database: database, configuration: backups)
/// scheduler.start()
/// …
/// if let error = scheduler.status.lastError { print("last backup failed:", error) }
/// scheduler.stop()
/// ```
public final class BackupScheduler: @unchecked Sendable {
    /// What the scheduler is doing and how its last attempt went.
    public struct Status: Sendable {
        /// True between ``start()`` and ``stop()``.
        public var isRunning: Bool
        /// True while a backup is being written.
        public var isBackingUp: Bool
        /// The newest generation this scheduler wrote.
        public var lastGeneration: BackupGeneration?
        /// The error of the last attempt, nil when it succeeded.
        public var lastError: CofferError?
        /// When the last attempt ended.
        public var lastAttempt: Date?
        /// Generations written since ``start()``.
        public var backupsWritten: Int
    }

    /// The configuration.
    public let configuration: BackupConfiguration
    private weak var database: Database?
    private let queue = DispatchQueue(label: "coffer.backup-scheduler", qos: .utility)
    private let lock = NSLock()
    // Guarded by `lock`.
    private var currentStatus = Status(
        isRunning: false, isBackingUp: false, lastGeneration: nil, lastError: nil, lastAttempt: nil, backupsWritten: 0)
    private var timer: DispatchSourceTimer?
    private var lastBackupDate: Date?
    private var observer: (@Sendable (Status) -> Void)?

    /// A scheduler for `database` (held weakly: closing or releasing the database stops it).
    public init(database: Database, configuration: BackupConfiguration) {
        self.database = database
        self.configuration = configuration
    }

    /// A snapshot of the scheduler's state.
    public var status: Status { lock.withLock { currentStatus } }

    /// Called on the scheduler's queue after every attempt.
    public func observe(_ body: @escaping @Sendable (Status) -> Void) {
        lock.withLock { observer = body }
    }

    /// Starts the schedule; the first tick takes a backup at once.
    public func start() {
        lock.withLock {
            guard timer == nil else { return }
            let period =
                configuration.changedPagesThreshold == nil ? (configuration.interval ?? 3600) : configuration.pollInterval
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now(), repeating: max(period, 0.01))
            timer.setEventHandler { [weak self] in self?.tick() }
            self.timer = timer
            currentStatus.isRunning = true
            timer.resume()
        }
    }

    /// Stops the schedule and waits for a running backup to finish.
    public func stop() {
        let timer = lock.withLock { () -> DispatchSourceTimer? in
            defer {
                self.timer = nil
                currentStatus.isRunning = false
            }
            return self.timer
        }
        timer?.cancel()
        queue.sync {}
    }

    /// Takes a backup now on the caller's thread (automatic kind), prunes, and updates ``status``.
    @discardableResult
    public func backupNow() throws -> BackupGeneration {
        try queue.sync { try runBackup() }
    }

    private func tick() {
        guard let database else {
            stop()
            return
        }
        let now = Date()
        let due: Bool = lock.withLock {
            guard let last = lastBackupDate else { return true }
            if let interval = configuration.interval, now.timeIntervalSince(last) >= interval { return true }
            if let threshold = configuration.changedPagesThreshold, database.changeTracker.changedPageCount >= threshold {
                return true
            }
            return false
        }
        if due { _ = try? runBackup() }
    }

    private func runBackup() throws -> BackupGeneration {
        guard let database else { throw CofferError(code: .apiMisuse, message: "the database is gone") }
        lock.withLock { currentStatus.isBackingUp = true }
        let result = Result { () throws -> BackupGeneration in
            let store = BackupDirectory(url: configuration.directory)
            let chainLength = try store.generations().last?.chain.count ?? 0
            let kind: Database.BackupKind = chainLength > configuration.incrementsPerChain ? .full : .automatic
            let generation = try database.backup(
                to: configuration.directory, kind: kind, pagesPerStep: configuration.pagesPerStep)
            try store.prune(keepingChains: configuration.generationsToKeep)
            return generation
        }
        let (status, observer) = lock.withLock { () -> (Status, (@Sendable (Status) -> Void)?) in
            currentStatus.isBackingUp = false
            currentStatus.lastAttempt = Date()
            switch result {
            case .success(let generation):
                currentStatus.lastGeneration = generation
                currentStatus.lastError = nil
                currentStatus.backupsWritten += 1
                lastBackupDate = Date()
            case .failure(let error):
                currentStatus.lastError = error as? CofferError ?? CofferError(code: .error, message: "\(error)")
            }
            return (currentStatus, self.observer)
        }
        if case .failure(let error) = result {
            database.configuration.logger.warning("scheduled backup failed", metadata: ["error": "\(error)"])
        }
        observer?(status)
        return try result.get()
    }
}
