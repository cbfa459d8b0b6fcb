import CofferEngine
import Foundation

/// A table filling from another table while the app keeps reading and writing it: what
/// `Database.migrateLive(_:from:options:)` returns.
///
/// From the moment it is declared the table reads as if it held every source row (each connection reads
/// it through a union of the table and the rows still in the source), typed writes move the source rows
/// they touch first, and a worker thread moves the rest in batches, one transaction each, on the writer
/// between the app's writes. Its progress survives crashes: it is kept in the database, committed with
/// the rows.
///
/// ```swift
/// let migration = try database.migrateLive(Message.self, from: .table("message", inFile: plainPath))
/// for try await event in migration.progressUpdates() {
///     if case .progress(let moved, let total) = event { print("\(moved)/\(total)") }
/// }
/// ```
public final class LiveMigration: @unchecked Sendable {
    /// The table being filled.
    public let table: String
    private weak var database: Database?
    private let union: LiveMigrationTable
    private let source: LiveMigrationSource
    private let options: LiveMigrationOptions
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var current: LiveMigrationProgress
    private var paused = false
    private var finishing = false
    /// The database began to close: the worker stops, even when paused.
    private var closing = false
    private var ended = false
    private var failure: (any Error)?
    private var subscribers: [Int: AsyncThrowingStream<ProgressEvent<LiveMigrationProgress>, any Error>.Continuation] = [:]
    private var nextSubscriber = 0

    init(
        database: Database, union: LiveMigrationTable, source: LiveMigrationSource, options: LiveMigrationOptions,
        progress: LiveMigrationProgress
    ) {
        self.table = union.target
        self.database = database
        self.union = union
        // Without its key: the attachment keeps the derived page key, wipeable, and nothing reads it here.
        self.source = LiveMigrationSource(table: source.table, path: source.path, encryption: source.encryption.redacted)
        self.options = options
        self.current = progress
        self.ended = progress.isFinished
        database.onClose { [weak self] in
            guard let self else { return }
            condition.withLock {
                closing = true
                condition.broadcast()
            }
        }
    }

    /// Rows moved so far of the rows to move, and whether the migration is over.
    public var progress: LiveMigrationProgress { condition.withLock { current } }

    /// The progress as it changes: `.progress(completed:total:)` now and after each batch (rows), then
    /// `.finished` with the final progress; throws what stopped the worker (the database closed: the
    /// migration resumes when it is declared again after the next open).
    public func progressUpdates() -> AsyncThrowingStream<ProgressEvent<LiveMigrationProgress>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ProgressEvent<LiveMigrationProgress>, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(64))
        condition.lock()
        defer { condition.unlock() }
        if ended {
            if let failure {
                continuation.finish(throwing: failure)
            } else {
                continuation.yield(.finished(current))
                continuation.finish()
            }
            return stream
        }
        continuation.yield(.progress(completed: current.movedRows, total: current.totalRows))
        nextSubscriber += 1
        let id = nextSubscriber
        subscribers[id] = continuation
        continuation.onTermination = { [weak self] _ in self?.condition.withLock { self?.subscribers[id] = nil } }
        return stream
    }

    /// Stops the worker after its current batch. Reads and writes keep working through the union.
    public func pause() { condition.withLock { paused = true } }

    /// Lets a paused worker go on.
    public func resume() {
        condition.withLock {
            paused = false
            condition.broadcast()
        }
    }

    /// Moves every remaining row now, batch after batch without pauses (the app's writes still interleave
    /// between batches), and returns once the source is dropped or detached. Blocks the calling thread.
    ///
    /// - Throws: what stopped the worker.
    public func finishNow() throws {
        condition.lock()
        defer { condition.unlock() }
        finishing = true
        paused = false
        condition.broadcast()
        while !ended { condition.wait() }
        if let failure { throw failure }
    }

    /// Waits, without blocking a thread, until every row has moved.
    ///
    /// - Throws: what stopped the worker.
    public func waitUntilFinished() async throws {
        for try await event in progressUpdates() {
            if case .finished = event { return }
        }
    }

    // MARK: The worker

    /// Starts the worker thread.
    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "coffer.live-migration"
        thread.start()
    }

    private func run() {
        // Fewer catch-up checkpoints on the writer's queue while the worker writes (see `Checkpointer`).
        let checkpointer = database?.checkpointer
        checkpointer?.beginBulkWrites()
        defer { checkpointer?.endBulkWrites() }
        var sizer = BatchSizer(options)
        // When the last batch committed (or the worker started).
        var lastCommit = DispatchTime.now().uptimeNanoseconds
        while true {
            condition.lock()
            while paused && !finishing && !closing { condition.wait() }
            let hurried = finishing
            let closed = closing
            condition.unlock()
            guard let database, !closed else {
                end(failure: CofferError(code: .apiMisuse, message: "the database is closed"))
                return
            }
            do {
                let rows = hurried ? options.batchSize : sizer.rows
                let started = DispatchTime.now().uptimeNanoseconds
                // A batch gives way to the app's calls unless none committed for `Self.starvation`.
                let givesWay = started - lastCommit < Self.starvation
                guard let (state, moved) = try moveBatch(database, rows: rows, givingWay: givesWay) else { continue }
                lastCommit = DispatchTime.now().uptimeNanoseconds
                sizer.record(moved: moved, nanoseconds: DispatchTime.now().uptimeNanoseconds - started)
                database.factory.metrics?.recordLiveMigrationRows(moved)
                publish(state.progress)
                if state.isDone {
                    try complete(database)
                    var final = state.progress
                    final.isFinished = true
                    end(progress: final)
                    return
                }
            } catch {
                end(failure: error)
                return
            }
            if !hurried && options.pauseBetweenBatches > 0 {
                condition.lock()
                if !finishing && !closing {
                    _ = condition.wait(until: Date(timeIntervalSinceNow: options.pauseBetweenBatches))
                }
                condition.unlock()
            }
        }
    }

    /// Moves one batch of at most `rows` rows in one write transaction; nil when it gave way.
    ///
    /// Giving way, a call that queues for the writer interrupts the batch (`SerializedConnection.givingWay`)
    /// and it rolls back: the call waits for a rollback, not for the batch and its commit. A batch that
    /// does not give way lets a queued call in once it has held the writer `maximumAppWait`, committing
    /// the rows it moved so far. Hurried batches (``finishNow()``) give way like the others.
    private func moveBatch(_ database: Database, rows: Int, givingWay: Bool) throws -> (LiveMigrationState, moved: Int)? {
        let writer = database.writer
        let patience = UInt64(max(0, options.maximumAppWait) * 1e9)
        do {
            return try database.write { db in
                let holding = DispatchTime.now().uptimeNanoseconds
                guard givingWay else {
                    return try LiveMigrationState.moveBatch(union, batchSize: rows, db) {
                        writer.hasQueuedCallers && DispatchTime.now().uptimeNanoseconds - holding >= patience
                    }
                }
                return try writer.givingWay(db) { asked in
                    do {
                        // Asked, the batch stops after its step, and the statements after it are interrupted.
                        let outcome = try LiveMigrationState.moveBatch(union, batchSize: rows, db, yields: asked)
                        if asked() { throw GaveWay() }
                        return outcome
                    } catch {
                        // An interrupted statement's error, or any other: the batch rolls back either way.
                        if asked() { throw GaveWay() }
                        throw error
                    }
                }
            }
        } catch is GaveWay {
            return nil
        }
    }

    /// How long batches may give way to the app without one committing, in nanoseconds: then one batch
    /// keeps its rows, so an app that writes all the time still lets the migration move.
    static let starvation: UInt64 = 20_000_000

    /// After the last batch committed: every connection stops reading the union (readers are drained and
    /// reopened, so none can read a view of a dropped table), then the source is dropped or let go of.
    private func complete(_ database: Database) throws {
        LiveMigrationRegistry.of(database)?.remove(table)
        if let readers = database.readers {
            readers.suspendAndDrain()
            readers.resume()
        }
        try database.writeWithoutTransaction { db in try LiveMigrationState.cleanUp(table, db) }
        if options.removesSourceFile, let path = source.path { Self.removeFile(path) }
    }

    /// Deletes a source file and the files SQLite keeps beside it.
    static func removeFile(_ path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    private func publish(_ progress: LiveMigrationProgress) {
        condition.withLock {
            current = progress
            for continuation in subscribers.values {
                continuation.yield(.progress(completed: progress.movedRows, total: progress.totalRows))
            }
        }
    }

    private func end(progress: LiveMigrationProgress? = nil, failure: (any Error)? = nil) {
        let (ending, final) = condition.withLock {
            if let progress { current = progress }
            self.failure = failure
            ended = true
            defer { subscribers.removeAll() }
            condition.broadcast()
            return (Array(subscribers.values), current)
        }
        // Outside the lock: finishing a stream runs its `onTermination`, which takes the lock.
        for continuation in ending {
            if let failure {
                continuation.finish(throwing: failure)
            } else {
                continuation.yield(.finished(final))
                continuation.finish()
            }
        }
    }

    /// Starts the worker again after a failure stopped it (the union kept serving reads and writes).
    func restartIfStopped() {
        let restart = condition.withLock {
            guard ended, failure != nil, !current.isFinished else { return false }
            ended = false
            failure = nil
            return true
        }
        if restart { start() }
    }
}

/// Thrown out of a batch that gave way to a queued call: its transaction rolls back.
struct GaveWay: Error {}

/// The size of the worker's next batch: as many rows as moved in ``LiveMigrationOptions/batchDuration``
/// at the speed of the batches so far (an exponential average), within 16…``LiveMigrationOptions/batchSize``.
struct BatchSizer {
    private let limit: Int
    private let duration: Double?
    /// Seconds per row, averaged; nil until a batch moved rows.
    private var secondsPerRow: Double?
    private(set) var rows: Int

    init(_ options: LiveMigrationOptions) {
        limit = options.batchSize
        duration = options.batchDuration
        rows = duration == nil ? limit : min(limit, 64)
    }

    mutating func record(moved: Int, nanoseconds: UInt64) {
        guard let duration, moved > 0 else { return }
        let perRow = Double(nanoseconds) / 1e9 / Double(moved)
        let average = secondsPerRow.map { 0.7 * $0 + 0.3 * perRow } ?? perRow
        secondsPerRow = average
        rows = max(min(16, limit), min(limit, Int(duration / average)))
    }
}
