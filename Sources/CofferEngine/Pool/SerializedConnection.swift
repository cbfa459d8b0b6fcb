internal import Atomics
import CSQLCipher
import Dispatch
import Foundation

/// One connection and the serial queue that owns it: every use of the connection happens on the queue.
///
/// Calls from outside the queue are dispatched synchronously (or asynchronously for async callers).
/// A call made while already on the queue — a `write` inside a `write` — would deadlock with
/// `DispatchQueue.sync`, so it is detected with a queue-specific key and refused with
/// ``CofferError/apiMisuse``; use ``Connection/savepoint(_:)`` to nest instead.
package final class SerializedConnection: @unchecked Sendable {
    // `connection` is only touched on `queue`.
    private var connection: Connection?
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<Void>()
    /// Told before and after each use of the connection (change observation); only touched on `queue`.
    var useObserver: (any WriterUseObserver)?
    /// Counts connection replacements (rekey), so per-connection state can tell a new connection from the
    /// old one even when SQLite reuses its address; only touched on `queue`.
    private(set) var generation = 0
    /// Times each wait for the queue (``Monitoring/writerWaits``, metrics); nil when monitoring is off.
    private let waitTrace: WriterWaitTrace?
    /// The operation using the connection now, or the last one; only touched on `queue`, with `waitTrace`.
    private var currentOperation: StaticString = "open"
    /// Callers queued for the connection and not on it yet (``hasQueuedCallers``).
    private let queuedCallers = ManagedAtomic<Int>(0)
    /// True while a use that gives way runs (``givingWay(_:_:)``): a caller that queues then asks it to.
    private let givingWayNow = ManagedAtomic<Bool>(false)
    private let givingWayLock = NSLock()
    // Guarded by `givingWayLock`: the handle of the use that gives way, and whether a caller asked it to.
    private var givingWayHandle: OpaquePointer?
    private var givingWayAsked = false

    init(connection: Connection, label: String, waitTrace: WriterWaitTrace? = nil) {
        self.connection = connection
        self.queue = DispatchQueue(label: label, qos: .userInitiated)
        self.waitTrace = waitTrace
        queue.setSpecific(key: key, value: ())
    }

    var isOnQueue: Bool { DispatchQueue.getSpecific(key: key) != nil }

    /// Whether another caller is waiting for the connection now: long background work on the queue (a
    /// live migration's batch) checks it between steps and commits early, so an app's write does not
    /// wait for the whole batch.
    package var hasQueuedCallers: Bool { queuedCallers.load(ordering: .relaxed) > 0 }

    /// Runs `body` on the queue and waits for it; `operation` (the caller's name) is what a wait trace
    /// reports.
    ///
    /// The result comes back through a slot of `T` and the queue runs a non-generic closure: Dispatch's
    /// generic, throwing `sync` looks up `Optional<T>`'s metadata on every call, which cost a write about
    /// 2,000 instructions (callgrind); the slot's allocation costs a tenth of that.
    package func sync<T>(_ operation: StaticString = #function, _ body: (Connection) throws -> T) throws -> T {
        guard !isOnQueue else {
            throw CofferError(
                code: .apiMisuse, message: "reentrant access: nest with savepoint(_:) inside the closure you already have")
        }
        let asked = waitTrace == nil ? 0 : DispatchTime.now().uptimeNanoseconds
        let slot = UnsafeMutablePointer<T>.allocate(capacity: 1)
        defer { slot.deallocate() }
        var failure: (any Error)?
        queuedCallers.wrappingIncrement(ordering: .sequentiallyConsistent)
        if givingWayNow.load(ordering: .sequentiallyConsistent) { askToGiveWay() }
        queue.sync {
            queuedCallers.wrappingDecrement(ordering: .relaxed)
            if let waitTrace { gotQueue(waitTrace, operation, askedAt: asked) }
            guard let connection else {
                failure = Self.closedError
                return
            }
            useObserver?.willUse(connection)
            defer { useObserver?.didUse(connection) }
            do { slot.initialize(to: try body(connection)) } catch { failure = error }
        }
        if let failure { throw failure }
        return slot.move()
    }

    /// Runs `body` on the queue without waiting; for work that must not block its caller.
    func async(_ operation: StaticString = #function, _ body: @escaping @Sendable (Connection?) -> Void) {
        let asked = waitTrace == nil ? 0 : DispatchTime.now().uptimeNanoseconds
        queuedCallers.wrappingIncrement(ordering: .sequentiallyConsistent)
        if givingWayNow.load(ordering: .sequentiallyConsistent) { askToGiveWay() }
        queue.async { [self] in
            queuedCallers.wrappingDecrement(ordering: .relaxed)
            if let waitTrace { gotQueue(waitTrace, operation, askedAt: asked) }
            guard let connection else { return body(nil) }
            useObserver?.willUse(connection)
            defer { useObserver?.didUse(connection) }
            body(connection)
        }
    }

    /// Runs `body` (on the queue, with `connection`, inside a transaction) as a use that gives way: from
    /// the moment another caller queues for the connection, the statement running for `body` is
    /// interrupted (`sqlite3_interrupt`) and `asked()` turns true; `body` should then stop, and its caller
    /// roll the transaction back. A caller queued already when this starts asks at once. Nothing else is
    /// ever interrupted: the interrupt is sent under a lock only while `body` runs, and once `body`
    /// returned no statement of it is active, so SQLite forgets the interrupt when the next one starts.
    ///
    /// A live migration's batch runs this way, so an app's write waits for a rollback, not for a commit.
    package func givingWay<T>(_ connection: Connection, _ body: (_ asked: () -> Bool) throws -> T) throws -> T {
        dispatchPrecondition(condition: .onQueue(queue))
        // Held before any caller can ask: an interrupt landing between two of `body`'s statements (or
        // before the first) stops the next one, not none.
        let holding = connection.holdInterrupts()
        defer { if holding { connection.releaseInterrupts() } }
        givingWayLock.withLock {
            givingWayHandle = connection.handle
            givingWayAsked = false
        }
        givingWayNow.store(true, ordering: .sequentiallyConsistent)
        defer {
            givingWayNow.store(false, ordering: .sequentiallyConsistent)
            givingWayLock.withLock { givingWayHandle = nil }
        }
        if queuedCallers.load(ordering: .sequentiallyConsistent) > 0 { askToGiveWay() }
        return try body { givingWayLock.withLock { givingWayAsked } }
    }

    /// Whether a use that gives way runs now (any thread; for tests and diagnostics).
    package var isGivingWay: Bool { givingWayNow.load(ordering: .relaxed) }

    /// Asks the use that gives way, if one runs, to stop (any thread).
    private func askToGiveWay() {
        givingWayLock.withLock {
            guard let handle = givingWayHandle, !givingWayAsked else { return }
            givingWayAsked = true
            sqlite3_interrupt(handle)
        }
    }

    /// Reports a wait that ended (on `queue`): `operation` waited behind `currentOperation`.
    private func gotQueue(_ trace: WriterWaitTrace, _ operation: StaticString, askedAt asked: UInt64) {
        trace.operation(operation, waitedSince: asked, behind: currentOperation)
        currentOperation = operation
    }

    /// Runs `body` on the queue and waits: at once when already on it (inside a use), else queued.
    func onQueue(_ body: (Connection?) -> Void) {
        if isOnQueue { body(connection) } else { queue.sync { body(connection) } }
    }

    /// Replaces the connection (after a rekey). Must run on the queue.
    package func replaceConnection(_ new: Connection?) {
        dispatchPrecondition(condition: .onQueue(queue))
        connection?.close()
        connection = new
        generation += 1
    }

    package static let closedError = CofferError(code: .apiMisuse, message: "the database is closed")
}

/// Told before and after each use of the writer's connection, on its queue (see `ObservationCenter`).
protocol WriterUseObserver: AnyObject {
    /// Before a use: the connection may be new (after a rekey).
    func willUse(_ connection: Connection)
    /// After a use: a transaction it committed can be announced.
    func didUse(_ connection: Connection)
}
