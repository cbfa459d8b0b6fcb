internal import Atomics
import CSQLCipher
import Dispatch
import Foundation

// Reading a fetch's rows on two threads (issue 40's W12 fetch): a second thread steps the statement —
// SQLite's work and the pages' decryption — while the thread that asked for the rows decodes the rows
// already read, and the two share the zstd work of compressed columns value by value.

/// Steps a statement on a second thread and hands its rows over in batches, the values of compressed
/// columns decoded by whichever thread gets to them first.
///
/// The thread that owns the statement makes one after the last row it read in place, calls ``start()``,
/// takes batches with ``next()``, moves to each row with ``moveToRow(_:in:)``, and calls ``stop()`` on every
/// path out (a `defer`). Between ``start()`` and the end of ``stop()`` only the second thread touches the
/// statement and its connection; it copies each row's values into the batch (numbers as they are, text
/// and blobs into one buffer), and the caller binds a row's copies to a `SELECT ?1, …` of a private
/// in-memory connection, whose result row gives the record readers real `sqlite3_value`s that point at
/// the copies. So each connection is used by one thread at a time, handed over under a lock each way,
/// and every reader reads exactly as it reads a statement's own row.
///
/// Compressed columns are selected through `coffer_column`, which passes stored values through while
/// the fetch reads ahead; the second thread looks up each compressed value's dictionary as it copies the
/// row (on the connection, in its transaction, as `coffer_decompress` would). Once it has three batches
/// out, it decodes compressed values of the oldest batches from their end, while the caller decodes from
/// the front as it reaches each row (a compare-and-exchange on each value says whose it is): neither
/// thread idles while the other has zstd work. A value that cannot be decoded fails the fetch at its row
/// with `coffer_decompress`'s message.
///
/// A batch is 64 rows, or fewer when their text and blobs pass 256 KiB, and at most three batches exist
/// at once, so the copies beside the records stay near a megabyte however many rows the statement
/// returns. A step's error reaches the caller from ``next()`` after the rows before it.
package final class RowPrefetcher: @unchecked Sendable {
    /// Rows a batch holds at most.
    static let rowsPerBatch = 64
    /// Text and blob bytes after which a batch ends before its 64 rows.
    static let bytesPerBatch = 256 * 1024
    /// Batches filled and not yet freed, at most.
    static let batchesInFlight = 3

    // Not private where RowPrefetcher+SecondThread.swift, the second thread's side, uses them.

    /// The statement's number of columns: the values of one row.
    let columns: Int
    let statement: Statement
    let codec: CompressionCodec
    /// `SELECT ?1, …, ?columns` on the codec's in-memory connection: turns a row's copies into values.
    private let scratch: OpaquePointer
    /// The compressed columns' positions in the row.
    let compressed: [Int]
    /// Per column: whether it is one of `compressed` (bound after its state is known).
    private let isCompressed: [Bool]
    let lengthLimit: UInt64
    let condition = NSCondition()
    // Guarded by `condition`.
    var ready: [Batch] = []
    var inFlight = 0
    var finished = false
    var stopRequested = false
    var failure: (any Error)?
    /// The batch the caller reads (the second thread decodes its values too).
    var current: Batch?
    /// Batches the caller is done with, freed by the second thread that allocated them (freeing on the
    /// caller sent the second thread's every allocation down glibc's slow path and grew the heap).
    var spent: [Batch] = []
    /// The caller's own: the bytes it decoded for the current row, one buffer per compressed column.
    private let callerBuffers: UnsafeMutablePointer<ScratchBuffer>

    /// Whether reading ahead can pay: only with a second processor to read on.
    package static var isWorthwhile: Bool { ProcessInfo.processInfo.activeProcessorCount > 1 }

    /// A prefetcher of the rows `statement` has left, whose columns at `compressedColumns` are selected
    /// through `coffer_column`; nil when the connection has no compression codec (so no such column) or
    /// the in-memory connection cannot be opened. Nothing runs before ``start()``.
    package init?(statement: Statement, compressedColumns: [Int]) {
        guard statement.columnCount > 0, let codec = statement.connection.compressionState as? CompressionCodec,
            let scratch = codec.scratchStatement(columns: statement.columnCount)
        else { return nil }
        self.statement = statement
        self.columns = statement.columnCount
        self.codec = codec
        self.scratch = scratch
        let compressed = compressedColumns.filter { $0 >= 0 && $0 < statement.columnCount }
        self.compressed = compressed
        self.isCompressed = (0..<statement.columnCount).map { compressed.contains($0) }
        self.lengthLimit = codec.lengthLimit
        self.callerBuffers = .allocate(capacity: max(1, compressed.count))
        callerBuffers.initialize(repeating: ScratchBuffer(), count: max(1, compressed.count))
    }

    deinit {
        for index in 0..<max(1, compressed.count) { callerBuffers[index].release() }
        callerBuffers.deinitialize(count: max(1, compressed.count))
        callerBuffers.deallocate()
    }

    /// Starts stepping the statement on a second thread, from its current row on.
    package func start() {
        codec.passesStoredValuesThrough = true
        // A queue of its own: a serial queue gets a thread even when the shared pool is saturated (by
        // callers blocked like this one, for instance), where work sent to a global queue could wait.
        DispatchQueue(label: "coffer.row-prefetch", qos: .userInitiated).async { self.run() }
    }

    /// The next batch of rows, or nil when the statement has none left; rethrows a step's error. Hands
    /// back the batch the previous call returned: read a batch's rows before asking for the next one.
    package func next() throws -> Batch? {
        condition.lock()
        defer { condition.unlock() }
        if let current {
            spent.append(current)
            self.current = nil
            condition.broadcast()
        }
        while ready.isEmpty && !finished { condition.wait() }
        if !ready.isEmpty {
            let batch = ready.removeFirst()
            current = batch
            return batch
        }
        if let failure { throw failure }
        return nil
    }

    /// The statement whose current row is the row ``moveToRow(_:in:)`` moved to: read it as the fetched
    /// statement's own row (`sqlite3_column_value`, column by column, in the same order).
    package var rowHandle: OpaquePointer { scratch }

    /// Makes row `row` of `batch` (the batch ``next()`` returned last) the current row of ``rowHandle``,
    /// compressed columns' values decoded, until the next call. Throws `coffer_decompress`'s error for a
    /// value that cannot be decoded.
    package func moveToRow(_ row: Int, in batch: Batch) throws {
        sqlite3_reset(scratch)
        let cells = batch.cells + row * columns
        let bytes = UnsafeRawPointer(batch.bytes.base)
        // Every bind is checked: a parameter that failed to bind would keep the previous row's value.
        var failed = false
        for column in 0..<columns where !isCompressed[column] {
            failed = failed || bind(cells[column], to: Int32(column + 1), from: bytes) != SQLITE_OK
        }
        for (index, column) in compressed.enumerated() {
            let position = row * compressed.count + index
            let slot = batch.slots + position
            let parameter = Int32(column + 1)
            switch Self.take(batch.state(position)) {
            case .plain:
                failed = failed || bind(cells[column], to: parameter, from: bytes) != SQLITE_OK
            case .escaped:
                let stored = slot.pointee.stored
                let code = Self.bind(
                    UnsafeRawBufferPointer(rebasing: stored.dropFirst()), isText: false, terminated: false, to: scratch,
                    parameter)
                failed = failed || code != SQLITE_OK
            case .pending:
                guard let header = slot.pointee.header else {
                    failed = failed || bind(cells[column], to: parameter, from: bytes) != SQLITE_OK
                    continue
                }
                let buffer = callerBuffers + index
                let result = codec.fetchDecoder.decode(
                    slot.pointee.stored, header: header, dictionary: slot.pointee.dictionary, limit: lengthLimit,
                    into: { buffer.pointee.reserve($0 + 1) })
                switch result {
                case .success(let plain):
                    let terminated = Self.terminate(plain, isText: header.isText)
                    let code = Self.bind(plain, isText: header.isText, terminated: terminated, to: scratch, parameter)
                    failed = failed || code != SQLITE_OK
                case .failure(.noMemory): throw CofferError(code: .noMemory, message: "out of memory", sql: statement.sql)
                case .failure(.damaged(let message)): throw CofferError(code: .error, message: message, sql: statement.sql)
                }
            case .decoded:
                let isText = slot.pointee.header?.isText ?? false
                let code = Self.bind(slot.pointee.bytes, isText: isText, terminated: isText, to: scratch, parameter)
                failed = failed || code != SQLITE_OK
            case .claimed, .failed:
                throw CofferError(code: .error, message: slot.pointee.message ?? "coffer_decompress failed", sql: statement.sql)
            }
        }
        guard !failed, sqlite3_step(scratch) == SQLITE_ROW else {
            throw CofferError(code: .noMemory, message: "out of memory reading a fetched row", sql: statement.sql)
        }
    }

    /// Binds a copied value to parameter `parameter` of the scratch statement.
    private func bind(_ cell: Cell, to parameter: Int32, from bytes: UnsafeRawPointer?) -> Int32 {
        switch cell.type {
        case SQLITE_INTEGER: return sqlite3_bind_int64(scratch, parameter, cell.integer)
        case SQLITE_FLOAT: return sqlite3_bind_double(scratch, parameter, cell.real)
        case SQLITE_TEXT, SQLITE_BLOB:
            return Self.bind(
                UnsafeRawBufferPointer(start: bytes.map { $0 + cell.offset }, count: cell.count),
                isText: cell.type == SQLITE_TEXT, terminated: cell.terminated, to: scratch, parameter)
        default: return sqlite3_bind_null(scratch, parameter)
        }
    }

    /// A slot's state for the caller, who reads it now: a pending value becomes the caller's to decode
    /// (returned as `.pending`); one the second thread is decoding is waited for (a value's decode takes
    /// a microsecond or so, so the wait spins, yielding the processor).
    private static func take(_ state: UnsafeAtomic<Int>) -> SlotState {
        while true {
            let (exchanged, found) = state.compareExchange(
                expected: SlotState.pending.rawValue, desired: SlotState.claimed.rawValue, ordering: .acquiring)
            if exchanged { return .pending }
            let current = SlotState(rawValue: found) ?? .failed
            guard current == .claimed else { return current }
            sched_yield()
        }
    }

    /// Writes a NUL after decoded text (its buffer holds one more byte); true when the text holds no NUL
    /// of its own, so that it can be bound NUL-terminated.
    static func terminate(_ bytes: UnsafeRawBufferPointer, isText: Bool) -> Bool {
        guard isText, let base = bytes.baseAddress else { return false }
        UnsafeMutableRawPointer(mutating: base).storeBytes(of: 0, toByteOffset: bytes.count, as: UInt8.self)
        return memchr(base, 0, bytes.count) == nil
    }

    /// Binds bytes in place (they stay put until the row is read). Text known to be NUL-terminated with
    /// no NUL of its own is bound that way, so that SQLite reads it without copying it.
    private static func bind(
        _ bytes: UnsafeRawBufferPointer, isText: Bool, terminated: Bool, to statement: OpaquePointer, _ parameter: Int32
    ) -> Int32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            if isText { return sqlite3_bind_text(statement, parameter, "", 0, transientDestructor) }
            return sqlite3_bind_zeroblob(statement, parameter, 0)
        }
        if isText {
            return sqlite3_bind_text(
                statement, parameter, base.assumingMemoryBound(to: CChar.self), terminated ? -1 : Int32(bytes.count), nil)
        }
        return sqlite3_bind_blob(statement, parameter, base, Int32(bytes.count), nil)
    }

    /// Waits until the second thread has let go of the statement, then frees every batch still held.
    /// The statement is the caller's again afterwards (positioned somewhere after the last row handed out).
    package func stop() {
        condition.lock()
        if let current {
            spent.append(current)
            self.current = nil
        }
        stopRequested = true
        condition.broadcast()
        while !finished { condition.wait() }
        let left = ready + spent
        ready = []
        spent = []
        condition.unlock()
        for batch in left { release(batch) }
        sqlite3_reset(scratch)
        sqlite3_clear_bindings(scratch)
        codec.passesStoredValuesThrough = false
    }
}
