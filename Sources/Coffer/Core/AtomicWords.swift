import CofferAtomics

/// A fixed number of 64-bit words, each alone on its cache line, read and written atomically
/// (sequentially consistent, C11 `stdatomic` in `CofferAtomics`): what the read path shares between
/// threads without a lock (the reader pool's idle slots, the commit clock's counts).
final class AtomicWords: @unchecked Sendable {
    private let base: UnsafeMutableRawPointer

    /// `count` words, all 0.
    init(count: Int) {
        let size = Int(COFFER_ATOMIC_WORD_SIZE)
        base = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1) * size, alignment: size)
        coffer_atomic_words_init(base, Int32(count))
    }

    deinit { base.deallocate() }

    @inline(__always) func load(_ index: Int) -> UInt64 { coffer_atomic_load(base, Int32(index)) }

    @inline(__always) func store(_ index: Int, _ value: UInt64) { coffer_atomic_store(base, Int32(index), value) }

    /// Stores `value`, returns what the word held.
    @inline(__always) func exchange(_ index: Int, _ value: UInt64) -> UInt64 {
        coffer_atomic_exchange(base, Int32(index), value)
    }

    /// Stores `desired` if the word holds `expected`; true when it did.
    @inline(__always) func compareExchange(_ index: Int, expected: UInt64, desired: UInt64) -> Bool {
        coffer_atomic_compare_exchange(base, Int32(index), expected, desired)
    }

    /// Adds `delta` (wrapping; `UInt64.max` subtracts one), returns the value before.
    @discardableResult
    @inline(__always) func add(_ index: Int, _ delta: UInt64) -> UInt64 {
        coffer_atomic_fetch_add(base, Int32(index), delta)
    }

    /// A small number for the calling thread, fixed for its life: where it starts looking among slots.
    static var threadNumber: Int { Int(coffer_thread_number()) }
}
