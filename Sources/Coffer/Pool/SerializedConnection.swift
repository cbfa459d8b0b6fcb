import Dispatch
import Foundation

/// One connection and the serial queue that owns it: every use of the connection happens on the queue.
///
/// Calls from outside the queue are dispatched synchronously (or asynchronously for async callers).
/// A call made while already on the queue — a `write` inside a `write` — would deadlock with
/// `DispatchQueue.sync`, so it is detected with a queue-specific key and refused with
/// ``CofferError/apiMisuse``; use ``Connection/savepoint(_:)`` to nest instead.
final class SerializedConnection: @unchecked Sendable {
    // `connection` is only touched on `queue`.
    private var connection: Connection?
    let queue: DispatchQueue
    private let key = DispatchSpecificKey<Void>()
    /// Told before and after each use of the connection (change observation); only touched on `queue`.
    var useObserver: (any WriterUseObserver)?
    /// Counts connection replacements (rekey), so per-connection state can tell a new connection from the
    /// old one even when SQLite reuses its address; only touched on `queue`.
    private(set) var generation = 0

    init(connection: Connection, label: String) {
        self.connection = connection
        self.queue = DispatchQueue(label: label, qos: .userInitiated)
        queue.setSpecific(key: key, value: ())
    }

    var isOnQueue: Bool { DispatchQueue.getSpecific(key: key) != nil }

    /// Runs `body` on the queue and waits for it.
    func sync<T>(_ body: (Connection) throws -> T) throws -> T {
        guard !isOnQueue else {
            throw CofferError(
                code: .apiMisuse, message: "reentrant access: nest with savepoint(_:) inside the closure you already have")
        }
        return try queue.sync {
            guard let connection else { throw Self.closedError }
            useObserver?.willUse(connection)
            defer { useObserver?.didUse(connection) }
            return try body(connection)
        }
    }

    /// Runs `body` on the queue without waiting; for work that must not block its caller.
    func async(_ body: @escaping @Sendable (Connection?) -> Void) {
        queue.async { [self] in
            guard let connection else { return body(nil) }
            useObserver?.willUse(connection)
            defer { useObserver?.didUse(connection) }
            body(connection)
        }
    }

    /// Runs `body` on the queue and waits: at once when already on it (inside a use), else queued.
    func onQueue(_ body: (Connection?) -> Void) {
        if isOnQueue { body(connection) } else { queue.sync { body(connection) } }
    }

    /// Replaces the connection (after a rekey). Must run on the queue.
    func replaceConnection(_ new: Connection?) {
        dispatchPrecondition(condition: .onQueue(queue))
        connection?.close()
        connection = new
        generation += 1
    }

    static let closedError = CofferError(code: .apiMisuse, message: "the database is closed")
}

/// Told before and after each use of the writer's connection, on its queue (see `ObservationCenter`).
protocol WriterUseObserver: AnyObject {
    /// Before a use: the connection may be new (after a rekey).
    func willUse(_ connection: Connection)
    /// After a use: a transaction it committed can be announced.
    func didUse(_ connection: Connection)
}
