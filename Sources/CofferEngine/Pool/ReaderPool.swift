internal import Atomics
import Foundation

/// Up to `capacity` reader connections, opened lazily, handed out one caller at a time.
///
/// `suspendAndDrain` is the barrier rekey and close need: it waits until every reader is back, closes
/// them all, and blocks new reads until `resume`.
package final class ReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    /// The most readers the pool opens.
    let capacity: Int
    private let open: () throws -> Connection
    // Guarded by `condition`, so the dynamic exclusivity checks (a quarter of what a checkout cost
    // besides the lock, under callgrind) are skipped.
    @exclusivity(unchecked) private var idle: [Connection] = []
    @exclusivity(unchecked) private var created = 0
    @exclusivity(unchecked) private var suspended = false
    @exclusivity(unchecked) private var closed = false
    /// Callers waiting on `condition` (changed under it, read without it by a lock-free check-in): a
    /// check-in wakes nobody when it is 0.
    private let waiting = ManagedAtomic<Int>(0)
    /// Readers checked in while nobody waited, each parked in the slot of the thread that used it and
    /// handed back to that thread's next checkout without the lock. They count as idle: a drain, a waiter
    /// and ``forEachIdle(_:)`` take them under the lock like the others.
    private let parked = ParkedReaders()
    /// `suspended`, readable without the lock: a check-in while a drain runs takes the locked path.
    private let draining = ManagedAtomic<Bool>(false)
    /// Holders of a reader for an unbounded time (snapshots), asked to give it back when the pool drains.
    @exclusivity(unchecked) private var revocations: [Int: () -> Void] = [:]
    @exclusivity(unchecked) private var nextRevocation = 0

    init(capacity: Int, open: @escaping () throws -> Connection) {
        self.capacity = capacity
        self.open = open
    }

    /// Runs `body` with a reader, waiting for one when all are busy.
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    /// A reader for the caller alone until ``checkIn(_:)``, waiting for one when all are busy.
    func checkOut() throws -> Connection {
        try checkOut(registering: nil).connection
    }

    /// ``checkOut()`` for a holder that keeps the reader for an unbounded time (a snapshot): `revoke` is
    /// registered under the lock that hands the reader out, while the pool is not draining, so a drain either
    /// finds the revocation or has not begun (registered after a drain had taken the list, it would wait
    /// for a reader whose holder it never asked back). Returns the reader and the id to
    /// ``removeRevocation(_:)`` with.
    func checkOutHeld(revoke: @escaping () -> Void) throws -> (connection: Connection, revocation: Int) {
        let held = try checkOut(registering: revoke)
        return (held.connection, held.revocation ?? 0)
    }

    private func checkOut(registering revoke: (() -> Void)?) throws -> (connection: Connection, revocation: Int?) {
        // The fast path: the reader this thread checked in last, without the lock (a drain that begins at
        // this moment waits for it like for any reader checked out just before). Every reader handed out
        // carries its thread's slot, where its check-in parks it.
        let slot = parked.slotOfCallingThread()
        if revoke == nil, !draining.load(ordering: .sequentiallyConsistent), let connection = parked.take(at: slot) {
            connection.parkingSlot = slot
            return (connection, nil)
        }
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw SerializedConnection.closedError
            }
            if !suspended {
                // Another thread's parked reader before a new one: a reader opened is a page cache more.
                if let connection = idle.popLast() ?? parked.takeAny() {
                    let id = revoke.map(registerLocked)
                    condition.unlock()
                    connection.parkingSlot = slot
                    return (connection, id)
                }
                if created < capacity {
                    created += 1
                    condition.unlock()
                    let connection: Connection
                    do {
                        connection = try open()
                    } catch {
                        condition.lock()
                        created -= 1
                        condition.broadcast()
                        condition.unlock()
                        throw error
                    }
                    connection.parkingSlot = slot
                    guard let revoke else { return (connection, nil) }
                    condition.lock()
                    if !suspended && !closed {
                        let id = registerLocked(revoke)
                        condition.unlock()
                        return (connection, id)
                    }
                    // A drain began while the reader opened: it is the drain's to close; wait like any caller.
                    idle.append(connection)
                    condition.broadcast()
                    continue
                }
            }
            if let connection = waitOrTakeParked() { idle.append(connection) }  // taken again at the loop's top
        }
    }

    private func registerLocked(_ revoke: @escaping () -> Void) -> Int {
        nextRevocation += 1
        revocations[nextRevocation] = revoke
        return nextRevocation
    }

    /// Waits on `condition` (held), counted so that a check-in without waiters skips the broadcast, unless
    /// a slot holds a parked reader, which it returns instead. The slots are looked at after the count
    /// includes this caller: a lock-free check-in then either sees the count (and takes the locked path,
    /// which wakes this caller) or left its reader where this finds it.
    private func waitOrTakeParked() -> Connection? {
        waiting.wrappingIncrement(ordering: .sequentiallyConsistent)
        defer { waiting.wrappingDecrement(ordering: .sequentiallyConsistent) }
        if let connection = parked.takeAny() { return connection }
        condition.wait()
        return nil
    }

    /// Returns a reader taken by ``checkOut()``.
    func checkIn(_ connection: Connection) {
        if connection.sawCorruption && connection.codecErrorsAreSticky {
            // SQLCipher 4 fails every later read of this connection: close it, a fresh one takes its place.
            connection.close()
            condition.lock()
            created -= 1
            if waiting.load(ordering: .sequentiallyConsistent) > 0 { condition.broadcast() }
            condition.unlock()
            return
        }
        // The fast path: parked in its thread's empty slot, while nobody waits and no drain runs. Both are
        // looked at again once the reader is in: a waiter or drain that began meanwhile may have looked at
        // the slots before, so the reader comes back out (if still there) by the locked path, which wakes
        // them.
        if waiting.load(ordering: .sequentiallyConsistent) == 0, !draining.load(ordering: .sequentiallyConsistent) {
            let slot = connection.parkingSlot
            if parked.park(connection, at: slot) {
                if waiting.load(ordering: .sequentiallyConsistent) > 0 || draining.load(ordering: .sequentiallyConsistent),
                    let back = parked.take(at: slot)
                {
                    checkInLocked(back)
                }
                return
            }
        }
        checkInLocked(connection)
    }

    /// Puts `connection` with the idle readers and wakes the waiters.
    private func checkInLocked(_ connection: Connection) {
        condition.lock()
        idle.append(connection)
        if waiting.load(ordering: .sequentiallyConsistent) > 0 { condition.broadcast() }
        condition.unlock()
    }

    /// Registers `revoke`, called (once, on the draining thread) when the pool drains for a rekey, a
    /// vacuum or close: it must check its reader in. Returns the id to ``removeRevocation(_:)`` with.
    func addRevocation(_ revoke: @escaping () -> Void) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return registerLocked(revoke)
    }

    /// Forgets a revocation: its holder gave its reader back.
    func removeRevocation(_ id: Int) {
        condition.lock()
        revocations[id] = nil
        condition.unlock()
    }

    /// Runs `body` on each reader no caller holds now, while holding them back from callers.
    func forEachIdle(_ body: (Connection) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        while let connection = parked.takeAny() { idle.append(connection) }
        idle.forEach(body)
    }

    /// Waits until no reader is checked out, closes every reader and holds new reads back.
    package func suspendAndDrain() {
        condition.lock()
        suspended = true
        draining.store(true, ordering: .sequentiallyConsistent)
        // Long holders give their reader back first (outside the lock: they check it in).
        let revoking = Array(revocations.values)
        revocations.removeAll()
        condition.unlock()
        revoking.forEach { $0() }
        condition.lock()
        while idle.count < created {  // a parked reader counts in `created`: taken here
            if let connection = waitOrTakeParked() { idle.append(connection) }
        }
        let readers = idle
        idle.removeAll()
        created = 0
        condition.unlock()
        readers.forEach { $0.close() }
    }

    /// Lets reads proceed again (they open fresh connections).
    package func resume() {
        condition.lock()
        suspended = false
        draining.store(false, ordering: .sequentiallyConsistent)
        condition.broadcast()
        condition.unlock()
    }

    /// Drains and refuses all further reads.
    func close() {
        suspendAndDrain()
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }
}
