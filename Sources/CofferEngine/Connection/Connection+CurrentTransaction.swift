// Connection+CurrentTransaction — the connection whose read or write closure is running on this thread,
// and the values lazily loaded in it, so that a relationship read with no connection in hand can load
// from the closure's snapshot, or say clearly that there is none.

import CSQLCipher
import Foundation

/// The thread-specific slot holding the connection of the transaction this thread runs (a pthread key:
/// a thread's own slot, so another thread, or a task started inside the closure, never sees it).
private let currentTransactionKey: pthread_key_t = {
    var key = pthread_key_t()
    pthread_key_create(&key, nil)
    return key
}()

extension Connection {
    /// The connection whose ``inTransaction(_:_:)`` closure is running on this thread, or nil (no read
    /// or write closure runs here, or it has returned).
    package static var current: Connection? {
        pthread_getspecific(currentTransactionKey).map { Unmanaged<Connection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Runs `body` as this thread's current transaction, and forgets what was lazily loaded in it when it
    /// ends: those values belong to its snapshot.
    func asCurrentTransaction<T>(_ body: () throws -> T) rethrows -> T {
        let previous = pthread_getspecific(currentTransactionKey)
        pthread_setspecific(currentTransactionKey, Unmanaged.passUnretained(self).toOpaque())
        defer {
            pthread_setspecific(currentTransactionKey, previous)
            faults.removeAll()
        }
        return try body()
    }
}

/// Values lazily loaded during one transaction, each under its query's shape (a ``PreparedQuery``'s
/// identifier: equal for equal SQL, hashed as an integer) and key value, valid while the connection has
/// changed no row since (`sqlite3_total_changes`; a savepoint rollback clears them).
package struct FaultCache {
    private struct Key: Hashable {
        let shape: Int
        let value: DatabaseValue
    }

    private var entries: [Key: (changes: Int32, value: Any)] = [:]

    /// The value loaded for query shape `shape` and `value` on `connection`, unless a row changed since.
    package func value(shape: Int, key value: DatabaseValue, on connection: Connection) -> Any? {
        guard let entry = entries[Key(shape: shape, value: value)],
            entry.changes == sqlite3_total_changes(connection.handle)
        else { return nil }
        return entry.value
    }

    /// Keeps `loaded` for `shape` and `value` until the connection changes a row or the transaction ends.
    package mutating func store(_ loaded: Any, shape: Int, key value: DatabaseValue, on connection: Connection) {
        entries[Key(shape: shape, value: value)] = (sqlite3_total_changes(connection.handle), loaded)
    }

    mutating func removeAll() {
        // Capacity kept while small: a transaction that faults a few relationships, the common case,
        // then allocates no table per transaction.
        if !entries.isEmpty { entries.removeAll(keepingCapacity: entries.capacity <= 64) }
    }
}
