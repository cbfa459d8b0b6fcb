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
        self.source = source
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
        var sizer = BatchSizer(options)
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
                // Even a hurried batch (finishNow) lets a queued app call in after `maximumAppWait`.
                let writer = database.writer
                let patience = UInt64(max(0, options.maximumAppWait) * 1e9)
                let (state, moved) = try database.write { db in
                    let holding = DispatchTime.now().uptimeNanoseconds
                    return try LiveMigrationState.moveBatch(union, batchSize: rows, db) {
                        writer.hasQueuedCallers && DispatchTime.now().uptimeNanoseconds - holding >= patience
                    }
                }
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
