import Foundation

/// Up to `capacity` reader connections, opened lazily, handed out one caller at a time (none when
/// `capacity` is 0: the database reads on its writer and never asks).
///
/// An idle reader sits in one of `capacity` atomic slots, each on its own cache line. A read takes one
/// with an atomic exchange, starting at the slot its thread used last time, and puts it back the same
/// way: with every reader free, concurrent reads take no lock and write no memory another reader thread
/// writes. The lock (`condition`) is taken only to open a reader, to wait for one, and for the barriers.
///
/// `suspendAndDrain` is the barrier rekey and close need: it waits until every reader is back, closes
/// them all, and blocks new reads until `resume`.
final class ReaderPool: @unchecked Sendable {
    private let condition = NSCondition()
    let capacity: Int
    private let open: () throws -> Connection
    /// Words `0..<capacity`: the idle readers (a retained `Connection`'s address, or 0). Word `capacity`:
    /// 1 while reads may take idle readers without the lock. Word `capacity + 1`: callers waiting on
    /// `condition` (a check-in wakes nobody when it is 0).
    private let words: AtomicWords
    private var acceptingWord: Int { capacity }
    private var waitingWord: Int { capacity + 1 }
    // Guarded by `condition`, so the dynamic exclusivity checks are skipped.
    @exclusivity(unchecked) private var created = 0
    @exclusivity(unchecked) private var suspended = false
    @exclusivity(unchecked) private var closed = false

    init(capacity: Int, open: @escaping () throws -> Connection) {
        self.capacity = capacity
        self.open = open
        self.words = AtomicWords(count: capacity + 2)
        words.store(capacity, 1)
    }

    deinit {
        // Readers never checked in again (the pool was not closed) are released with it.
        for slot in 0..<capacity { release(words.exchange(slot, 0)) }
    }

    /// Runs `body` with a reader, waiting for one when all are busy.
    func withReader<T>(_ body: (Connection) throws -> T) throws -> T {
        let connection = try checkOut()
        defer { checkIn(connection) }
        return try body(connection)
    }

    private func checkOut() throws -> Connection {
        if words.load(acceptingWord) != 0, let connection = takeIdle() { return connection }
        return try checkOutLocked()
    }

    /// The slow path: opens a reader while fewer than `capacity` exist, or waits for a check-in.
    private func checkOutLocked() throws -> Connection {
        condition.lock()
        while true {
            if closed {
                condition.unlock()
                throw SerializedConnection.closedError
            }
            if !suspended {
                if let connection = takeIdle() {
                    condition.unlock()
                    return connection
                }
                if created < capacity {
                    created += 1
                    condition.unlock()
                    do {
                        return try open()
                    } catch {
                        condition.lock()
                        created -= 1
                        condition.broadcast()
                        condition.unlock()
                        throw error
                    }
                }
            }
            wait { !suspended && !isEmpty }
        }
    }

    /// Waits on `condition` (held) unless `ready` already holds once this caller counts as waiting: a
    /// check-in puts its reader back before it reads the count, so either `ready` sees that reader or
    /// the check-in sees the waiter and broadcasts (under the lock this caller holds until it waits).
    private func wait(unless ready: () -> Bool) {
        words.add(waitingWord, 1)
        if !ready() { condition.wait() }
        words.add(waitingWord, UInt64.max)
    }

    private func checkIn(_ connection: Connection) {
        putIdle(connection)
        if words.load(waitingWord) != 0 {
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Takes an idle reader out of its slot, starting at this thread's own, or nil when none is idle.
    private func takeIdle() -> Connection? {
        let start = AtomicWords.threadNumber % capacity
        for offset in 0..<capacity {
            let slot = (start + offset) % capacity
            // Read before exchanging: an empty slot is not written.
            guard words.load(slot) != 0 else { continue }
            let address = words.exchange(slot, 0)
            if let pointer = UnsafeRawPointer(bitPattern: UInt(address)) {
                return Unmanaged<Connection>.fromOpaque(pointer).takeRetainedValue()
            }
        }
        return nil
    }

    /// Puts `connection` in a free slot, this thread's own first. There always is one: at most
    /// `capacity` readers exist and `connection` is in none.
    private func putIdle(_ connection: Connection) {
        let address = UInt64(UInt(bitPattern: Unmanaged.passRetained(connection).toOpaque()))
        let start = AtomicWords.threadNumber % capacity
        var offset = 0
        while !words.compareExchange((start + offset) % capacity, expected: 0, desired: address) {
            offset += 1
        }
    }

    /// Whether no reader is idle.
    private var isEmpty: Bool { (0..<capacity).allSatisfy { words.load($0) == 0 } }

    /// Takes every idle reader out of its slot (`condition` held).
    private func takeAllIdle() -> [Connection] {
        var taken: [Connection] = []
        while let connection = takeIdle() { taken.append(connection) }
        return taken
    }

    private func release(_ address: UInt64) {
        guard let pointer = UnsafeRawPointer(bitPattern: UInt(address)) else { return }
        Unmanaged<Connection>.fromOpaque(pointer).release()
    }

    /// Runs `body` on each reader no caller holds now, while holding them back from callers.
    func forEachIdle(_ body: (Connection) -> Void) {
        condition.lock()
        defer { condition.unlock() }
        let idle = takeAllIdle()
        idle.forEach(body)
        idle.forEach(putIdle)
    }

    /// Waits until no reader is checked out, closes every reader and holds new reads back.
    func suspendAndDrain() {
        condition.lock()
        suspended = true
        words.store(acceptingWord, 0)
        var readers = takeAllIdle()
        while readers.count < created {
            wait { !isEmpty }
            readers += takeAllIdle()
        }
        created = 0
        condition.unlock()
        readers.forEach { $0.close() }
    }

    /// Lets reads proceed again (they open fresh connections).
    func resume() {
        condition.lock()
        suspended = false
        words.store(acceptingWord, 1)
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
