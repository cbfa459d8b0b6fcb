// ParkedReaders — the reader pool's lock-free slots: a reader checked in is parked in the slot of the
// thread that used it, and that thread's next checkout takes it back without the pool's lock.

internal import Atomics
import Foundation

/// Idle readers parked one per slot, a slot per reading thread (threads are numbered as they first read
/// and share slots beyond ``count``), each slot on a cache line of its own.
///
/// A thread that reads again finds the reader it used last, as a raw C program's thread keeps its own
/// connection, and two threads reading at once write no memory in common to hand readers over. With one
/// shared slot (until issue 43), the first of two reading threads to check in kept it, the other took the
/// pool's lock at every read, both wrote the slot's line, and a thread that paused between reads often
/// found the other thread holding its reader (65–127 of 1,000 reads in `ReaderPoolHandOffTests`).
///
/// Every slot holds the bits of a retained `Unmanaged<Connection>`, 0 when empty. A parked reader counts as
/// idle for the pool: drains, waiters and visits of the idle readers take them out under the pool's lock.
final class ParkedReaders: @unchecked Sendable {
    /// Slots per pool: more than the reading threads of most apps, 1 KiB in all.
    static let count = 8
    /// Bytes between slots: two cache lines, so that the adjacent-line prefetcher does not pair them.
    private static let stride = 128
    private let storage: UnsafeMutableRawPointer
    /// ``ReadingThread/key``, kept here so that a read does not check the global's one-time initialization.
    private let threadKey = ReadingThread.key

    init() {
        storage = UnsafeMutableRawPointer.allocate(byteCount: Self.count * Self.stride, alignment: Self.stride)
        for index in 0..<Self.count {
            storage.advanced(by: index * Self.stride).initializeMemory(
                as: UnsafeAtomic<UInt>.Storage.self, repeating: UnsafeAtomic<UInt>.Storage(0), count: 1)
        }
    }

    deinit {
        while takeAny() != nil {}  // released like the pool's other idle readers
        storage.deallocate()
    }

    private func slot(_ index: Int) -> UnsafeAtomic<UInt> {
        UnsafeAtomic(at: storage.advanced(by: index * Self.stride).assumingMemoryBound(to: UnsafeAtomic<UInt>.Storage.self))
    }

    /// The calling thread's slot.
    func slotOfCallingThread() -> Int {
        Int(ReadingThread.number(key: threadKey) % UInt(Self.count))
    }

    /// The reader parked in slot `index`, emptying it; nil when it was empty.
    func take(at index: Int) -> Connection? {
        let bits = slot(index).exchange(0, ordering: .sequentiallyConsistent)
        guard let pointer = UnsafeRawPointer(bitPattern: bits) else { return nil }
        return Unmanaged<Connection>.fromOpaque(pointer).takeRetainedValue()
    }

    /// Parks `connection` in slot `index` if it is empty; false (and nothing parked) when it was not.
    func park(_ connection: Connection, at index: Int) -> Bool {
        let retained = Unmanaged.passRetained(connection)
        let bits = UInt(bitPattern: retained.toOpaque())
        if slot(index).compareExchange(expected: 0, desired: bits, ordering: .sequentiallyConsistent).exchanged {
            return true
        }
        retained.release()
        return false
    }

    /// A reader parked in any slot, emptying that slot; nil when every slot is empty.
    func takeAny() -> Connection? {
        for index in 0..<Self.count {
            if let connection = take(at: index) { return connection }
        }
        return nil
    }
}

/// Numbers for threads, given in the order they first ask: the slot a thread parks its reader in.
private enum ReadingThread {
    /// The thread's number + 1, as a pointer's bits (0, nil: not numbered yet).
    static let key: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
    static let next = ManagedAtomic<UInt>(0)

    static func number(key: pthread_key_t) -> UInt {
        if let bits = pthread_getspecific(key) { return UInt(bitPattern: bits) - 1 }
        let number = next.loadThenWrappingIncrement(ordering: .relaxed)
        pthread_setspecific(key, UnsafeRawPointer(bitPattern: number + 1))
        return number
    }
}
