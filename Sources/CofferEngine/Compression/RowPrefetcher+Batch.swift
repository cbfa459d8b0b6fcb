internal import Atomics

// The rows a `RowPrefetcher` hands over: each batch's copies of its rows, and what each compressed value
// still needs before it is read.

extension RowPrefetcher {
    /// One batch of rows.
    package final class Batch {
        /// How many rows the batch holds.
        package internal(set) var rows = 0
        /// `rows` × `columns` copies, row by row.
        let cells: UnsafeMutablePointer<Cell>
        /// The text and blob bytes the cells point into (by offset while the batch fills).
        @exclusivity(unchecked) var bytes = ScratchBuffer()
        @exclusivity(unchecked) var byteCount = 0
        /// One per row and compressed column (row by row). Written by the second thread before the batch
        /// is handed over and, for a value it decodes, before the value's state says so.
        let slots: UnsafeMutablePointer<Slot>
        /// Each slot's ``SlotState``, which both threads move on with compare-and-exchange.
        let states: UnsafeMutablePointer<UnsafeAtomic<Int>.Storage>
        @exclusivity(unchecked) var slotCount = 0
        /// The next slot, from the end, the second thread may decode (only it touches this).
        @exclusivity(unchecked) var helperCursor = -1
        /// Where the second thread's decoded values live until the batch is freed (only it touches this).
        @exclusivity(unchecked) var decoded: [UnsafeMutableRawPointer] = []
        /// The dictionaries the batch's values need, kept alive with them.
        @exclusivity(unchecked) var dictionaries: [CompressionCodec.Digested] = []

        init(capacity: Int, columns: Int, compressed: Int) {
            cells = .allocate(capacity: max(1, capacity * columns))
            slots = .allocate(capacity: max(1, capacity * compressed))
            states = .allocate(capacity: max(1, capacity * compressed))
        }

        func state(_ index: Int) -> UnsafeAtomic<Int> { UnsafeAtomic(at: states + index) }
    }

    /// One copied value: its storage class, and its number or where its bytes are.
    struct Cell {
        var type: Int32
        var integer: Int64 = 0
        var real: Double = 0
        /// The offset of the bytes in the batch's buffer, and how many (text: a NUL follows them).
        var offset = 0
        var count = 0
        /// Whether text holds no NUL of its own, so that it binds NUL-terminated (without a copy).
        var terminated = false
    }

    /// What a compressed column's copied value needs before it is read.
    enum SlotState: Int {
        /// Nothing: the copy is the value (not compressed).
        case plain
        /// An escaped BLOB: the bytes after the first.
        case escaped
        /// Compressed, not yet decoded.
        case pending
        /// Being decoded by one of the threads.
        case claimed
        /// Decoded by the second thread into the slot's `bytes`.
        case decoded
        /// Cannot be decoded: the slot's `message` says why.
        case failed
    }

    /// What a compressed column's copied value needs before it is read (its state aside).
    struct Slot {
        /// The stored bytes (valid once the batch is filled).
        var stored = UnsafeRawBufferPointer(start: nil, count: 0)
        var header: CompressedValue.Header?
        /// The digested dictionary (the batch keeps it alive), nil for none.
        var dictionary: OpaquePointer?
        var bytes = UnsafeRawBufferPointer(start: nil, count: 0)
        var message: String?
    }
}
