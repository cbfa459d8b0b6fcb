import CSQLCipher
import Foundation

/// The open writer and reader connections of one database, so that ``Database/interrupt()`` can reach
/// every statement running on them.
///
/// `sqlite3_interrupt` is safe from any thread, but not on a connection that is closed or closing: each
/// connection leaves the registry (under its lock) before its handle closes, and the interrupt runs under
/// the same lock. Nothing here is on the path of a read or a write: only opening and closing a connection
/// touch the lock.
package final class InterruptRegistry: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var handles: [ObjectIdentifier: OpaquePointer] = [:]
    private var interrupts = 0

    /// Adds `connection` until it closes.
    func add(_ connection: Connection) {
        let id = ObjectIdentifier(connection)
        let handle = connection.handle
        lock.withLock { handles[id] = handle }
        connection.willClose = { [weak self] in
            guard let self else { return }
            self.lock.withLock { _ = self.handles.removeValue(forKey: id) }
        }
    }

    /// Calls `sqlite3_interrupt` on every open connection; returns how many were reached.
    @discardableResult
    func interruptAll() -> Int {
        lock.withLock {
            interrupts += 1
            for handle in handles.values { sqlite3_interrupt(handle) }
            return handles.count
        }
    }

    /// How many times ``interruptAll()`` ran (tests, benchmarks).
    var interruptCount: Int { lock.withLock { interrupts } }
}
