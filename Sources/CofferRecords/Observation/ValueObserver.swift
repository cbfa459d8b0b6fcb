import CofferEngine
import Dispatch
import Foundation

/// One running value observation: re-fetches after each commit that touched what the last fetch read,
/// one fetch at a time, and hands each new value to `deliver`.
///
/// Why the values are right:
/// - A fetch is scheduled only after the commit that triggered it has been announced, which happens
///   after it committed, so the fetch's read transaction starts at or after it.
/// - Fetches run one after another (on `queue`, or the caller's thread for a synchronous first value,
///   before any other is scheduled), each starting after the previous one ended: snapshots never go
///   back in time.
/// - A commit announced while a fetch runs may have missed its snapshot: it is kept, and once the fetch
///   has recorded its region (which can differ from the last one: `WHERE id = ?` with another id) the
///   fetch is followed by another if the commit touched that region. One announced while a fetch waits
///   to start is covered by it (bursts coalesce), and fetches start at most once per `minimumInterval`.
/// - So after the last commit, the last fetch starts after it: the last value is the final state.
/// - Started from a snapshot, the first fetch reads the snapshot's state and is always followed by one of
///   the current state: commits made between the snapshot and the subscription were announced to nobody.
///
/// The ``ObservationCenter`` tells it only of commits to the tables its last fetch read (a commit to
/// another table cannot touch the region, and costs this observation nothing), and of every commit while
/// a fetch runs, whose region is not known yet: it widens before the fetch reads, and narrows once the
/// region is recorded.
final class ValueObserver<Value: Sendable>: @unchecked Sendable {
    private let database: Database
    private let fetch: @Sendable (Connection) throws -> Value
    private let isDuplicate: (@Sendable (Value, Value) -> Bool)?
    private let minimumInterval: TimeInterval
    private let deliver: @Sendable (Result<Value, any Error>, _ inline: Bool) -> Void
    /// Called once if the database closes under the observation (it then ends).
    private let onClose: @Sendable () -> Void
    private let queue = DispatchQueue(label: "coffer.observation", qos: .userInitiated)
    /// Attached to the connection a fetch runs on: ``cancel()`` interrupts that fetch's statement.
    private let latch = CancellationLatch()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var region = ReadRegion.everything
    private var scheduled = false
    private var running = false
    private var again = false
    /// Commits announced while the fetch runs, to compare with the region it records (bounded: past
    /// `pendingLimit` the fetch is simply followed by another).
    private var pending: [DatabaseChangeSet] = []
    private static var pendingLimit: Int { 64 }
    private var schemaMayHaveChanged = false
    private var cancelled = false
    private var subscription: Int?
    private var lastStart = DispatchTime(uptimeNanoseconds: 0)
    // Touched only by the fetch in progress.
    private var recorder = ReadRegionRecorder()
    /// The tables the center tells this observation of (nil: every commit).
    private var followedTables: Set<String>?
    private var lastValue: Value?
    /// The snapshot the first fetch reads, if the observation starts from one (guarded by `lock`; taken by
    /// the first fetch).
    private var startSnapshot: DatabaseSnapshot?

    init(
        database: Database, options: ObservationOptions, isDuplicate: (@Sendable (Value, Value) -> Bool)?,
        snapshot: DatabaseSnapshot? = nil, fetch: @escaping @Sendable (Connection) throws -> Value,
        onClose: @escaping @Sendable () -> Void = {},
        deliver: @escaping @Sendable (Result<Value, any Error>, _ inline: Bool) -> Void
    ) {
        self.startSnapshot = snapshot
        self.onClose = onClose
        self.database = database
        self.fetch = fetch
        self.isDuplicate = options.removesDuplicates ? isDuplicate : nil
        self.minimumInterval = options.coalescingInterval
        self.deliver = deliver
    }

    /// Subscribes, then fetches the first value: on the calling thread when `synchronously`.
    func start(synchronously: Bool) {
        lock.withLock { running = true }
        let id = database.observation.subscribe(.rows, onClose: { [weak self] in self?.databaseDidClose() }) {
            [weak self] changes in self?.databaseDidChange(changes)
        }
        guard let id else {
            deliver(.failure(SerializedConnection.closedError), synchronously)
            return
        }
        lock.withLock { subscription = id }
        if synchronously { runFetch(inline: true) } else { queue.async { self.runFetch(inline: false) } }
    }

    /// Stops: no fetch starts, the one running is interrupted (its reader goes back to the pool at SQLite's
    /// next step), and no value is delivered afterwards (one being delivered may still arrive).
    func cancel() {
        let id = lock.withLock { () -> Int? in
            cancelled = true
            defer { subscription = nil }
            return subscription
        }
        latch.cancel()
        if let id { database.observation.unsubscribe(id) }
    }

    var isCancelled: Bool { lock.withLock { cancelled } }

    /// The database closed: nothing more is fetched or delivered.
    private func databaseDidClose() {
        let wasRunning = lock.withLock { () -> Bool in
            defer {
                cancelled = true
                subscription = nil
            }
            return !cancelled
        }
        if wasRunning { onClose() }
    }

    /// Called on the writer's queue for each commit (keep it short).
    private func databaseDidChange(_ changes: DatabaseChangeSet) {
        let delay = lock.withLock { () -> TimeInterval? in
            guard !cancelled else { return nil }
            if changes.isWholeDatabase { schemaMayHaveChanged = true }
            if running {
                if !again && pending.count < Self.pendingLimit {
                    pending.append(changes)
                } else {
                    again = true
                    pending.removeAll()
                }
                return nil
            }
            guard region.isTouched(by: changes) else { return nil }
            guard !scheduled else { return nil }
            scheduled = true
            return nextDelay()
        }
        if let delay { schedule(after: delay) }
    }

    private func nextDelay() -> TimeInterval {
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds &- lastStart.uptimeNanoseconds) / 1e9
        return max(0, minimumInterval - elapsed)
    }

    private func schedule(after delay: TimeInterval) {
        if delay <= 0 {
            queue.async { self.runFetch(inline: false) }
        } else {
            queue.asyncAfter(deadline: .now() + delay) { self.runFetch(inline: false) }
        }
    }

    private func runFetch(inline: Bool) {
        let started = lock.withLock { () -> (forget: Bool, snapshot: DatabaseSnapshot?)? in
            guard !cancelled else { return nil }
            scheduled = false
            running = true
            lastStart = .now()
            defer {
                schemaMayHaveChanged = false
                startSnapshot = nil
            }
            return (schemaMayHaveChanged, startSnapshot)
        }
        guard let (forget, snapshot) = started else { return }
        if forget { recorder.forgetCachedRegions() }
        follow(nil)
        let recorder = self.recorder
        let fetch = self.fetch
        // Without readers (in-memory databases) the fetch runs on the writer, whose statement trace is the
        // change collector's: no region is recorded there, and every commit re-fetches.
        let recordsRegion = database.readers != nil
        let latch = self.latch
        let body = { (db: Connection) throws -> (Value, ReadRegion) in
            try latch.run(on: db) {
                recordsRegion ? try recorder.record(on: db) { try fetch(db) } : (try fetch(db), ReadRegion.everything)
            }
        }
        let result = Result {
            if let snapshot {
                guard snapshot.isOf(database.readers) else {
                    throw CofferError(code: .apiMisuse, message: "the snapshot is not one of this database's")
                }
                return try snapshot.read(body)
            }
            return try database.read(body)
        }
        var delivery: Result<Value, any Error>?
        switch result {
        case .success(let (value, newRegion)):
            lock.withLock { region = newRegion }
            follow(newRegion.tables.map { Set($0.keys) })
            if let last = lastValue, let isDuplicate, isDuplicate(last, value) {
                delivery = nil
            } else {
                lastValue = value
                delivery = .success(value)
            }
        case .failure(let error):
            // The next commit tries again, whatever it touched.
            lock.withLock { region = .everything }
            delivery = .failure(error)
        }
        if let delivery, !isCancelled { deliver(delivery, inline) }
        let delay = lock.withLock { () -> TimeInterval? in
            running = false
            if pending.contains(where: region.isTouched(by:)) { again = true }
            // Commits between the snapshot and the subscription were never announced: one fetch of the
            // current state follows (a duplicate of the snapshot's value is not delivered).
            if snapshot != nil, case .success = result { again = true }
            pending.removeAll()
            guard again, !cancelled else { return nil }
            again = false
            scheduled = true
            return nextDelay()
        }
        if let delay { schedule(after: delay) }
    }

    /// Asks the center for the commits to `tables` only (nil: all); called by the fetch in progress.
    private func follow(_ tables: Set<String>?) {
        guard tables != followedTables, let id = lock.withLock({ subscription }) else { return }
        followedTables = tables
        database.observation.setTables(tables, for: id)
    }
}
