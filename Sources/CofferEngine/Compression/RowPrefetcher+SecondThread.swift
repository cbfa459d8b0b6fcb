internal import Atomics
import CSQLCipher
import Foundation

// What a `RowPrefetcher`'s second thread does: steps the statement into batches, decodes compressed values
// from the end of the oldest batches when it is far enough ahead, and frees the batches it allocated.

extension RowPrefetcher {
    /// What the second thread does next.
    private enum Work {
        case fill
        case free([Batch])
        case decode(Batch)
    }

    /// The second thread's loop, from ``start()`` until the statement is done, fails, or ``stop()`` asks:
    /// frees spent batches first, fills a batch while fewer than three are out, and otherwise decodes
    /// ahead in the batches the caller has not reached.
    func run() {
        var rowsPerBatch = 16
        while true {
            condition.lock()
            var work: Work?
            while work == nil {
                if stopRequested {
                    finished = true
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                if !spent.isEmpty {
                    work = .free(spent)
                    inFlight -= spent.count
                    spent = []
                } else if inFlight < Self.batchesInFlight {
                    inFlight += 1
                    work = .fill
                } else if let batch = batchToHelp() {
                    work = .decode(batch)
                } else {
                    condition.wait()
                }
            }
            condition.unlock()
            switch work {
            case .free(let batches):
                for batch in batches { release(batch) }
            case .decode(let batch):
                decodeAhead(batch)
            case .fill, nil:
                let (batch, done, error) = fill(rows: rowsPerBatch)
                condition.lock()
                if let batch {
                    ready.append(batch)
                } else {
                    inFlight -= 1
                }
                if done || error != nil {
                    finished = true
                    failure = error
                }
                condition.broadcast()
                condition.unlock()
                if done || error != nil { return }
                // The first batch is small so that the caller starts decoding early.
                rowsPerBatch = Self.rowsPerBatch
            }
        }
    }

    /// The caller's batch, or the first one ready after it, with compressed values the second thread has
    /// not looked at yet (under the lock).
    private func batchToHelp() -> Batch? {
        if let current, current.helperCursor >= 0 { return current }
        return ready.first { $0.helperCursor >= 0 }
    }

    /// Decodes up to eight values nobody has taken from the end of `batch` (the caller takes them from the
    /// front as it reaches each row) into memory the batch keeps, and publishes each. The batch stays
    /// allocated meanwhile: only this thread frees batches.
    private func decodeAhead(_ batch: Batch) {
        var taken = 0
        while taken < 8 && batch.helperCursor >= 0 {
            let index = batch.helperCursor
            batch.helperCursor -= 1
            let state = batch.state(index)
            guard
                state.compareExchange(
                    expected: SlotState.pending.rawValue, desired: SlotState.claimed.rawValue, ordering: .acquiring
                ).exchanged
            else { continue }
            taken += 1
            let slot = batch.slots + index
            guard let header = slot.pointee.header else { continue }
            let result = codec.aheadDecoder.decode(
                slot.pointee.stored, header: header, dictionary: slot.pointee.dictionary, limit: lengthLimit
            ) { size in
                let memory = UnsafeMutableRawPointer.allocate(byteCount: size + 1, alignment: 1)
                batch.decoded.append(memory)
                return memory
            }
            switch result {
            case .success(let plain):
                // Text bound NUL-terminated must hold no NUL of its own.
                if Self.terminate(plain, isText: header.isText) || !header.isText {
                    slot.pointee.bytes = plain
                    state.store(SlotState.decoded.rawValue, ordering: .releasing)
                } else {
                    // Rare: let the caller decode it again and bind it by its length.
                    state.store(SlotState.pending.rawValue, ordering: .releasing)
                }
            case .failure(.noMemory):
                slot.pointee.message = "out of memory"
                state.store(SlotState.failed.rawValue, ordering: .releasing)
            case .failure(.damaged(let message)):
                slot.pointee.message = message
                state.store(SlotState.failed.rawValue, ordering: .releasing)
            }
        }
    }

    /// Steps up to `rows` rows into a new batch: the batch (nil when no row was read), whether the
    /// statement is done, and the error that stopped it.
    private func fill(rows limit: Int) -> (Batch?, done: Bool, error: (any Error)?) {
        let batch = Batch(capacity: limit, columns: columns, compressed: compressed.count)
        let handle = statement.handle
        var rows = 0
        var done = false
        var error: (any Error)?
        // Slots name their stored bytes by offset until the buffer stops growing.
        var storedOffsets: [(slot: Int, cell: Int)] = []
        do {
            while rows < limit && batch.byteCount < Self.bytesPerBatch {
                guard try statement.step() else {
                    done = true
                    break
                }
                let row = batch.cells + rows * columns
                for column in 0..<columns {
                    (row + column).initialize(to: copy(sqlite3_column_value(handle, Int32(column)), into: batch))
                }
                for column in compressed {
                    let value = sqlite3_column_value(handle, Int32(column))
                    let (state, slot) = slot(for: value, keepingIn: batch)
                    if state != .plain { storedOffsets.append((batch.slotCount, rows * columns + column)) }
                    (batch.slots + batch.slotCount).initialize(to: slot)
                    (batch.states + batch.slotCount).initialize(to: .init(state.rawValue))
                    batch.slotCount += 1
                }
                rows += 1
            }
        } catch let stepError {
            error = stepError
        }
        batch.rows = rows
        batch.helperCursor = batch.slotCount - 1
        let base = UnsafeRawPointer(batch.bytes.base)
        for (slot, cell) in storedOffsets {
            let stored = batch.cells[cell]
            batch.slots[slot].stored = UnsafeRawBufferPointer(start: base.map { $0 + stored.offset }, count: stored.count)
        }
        guard rows > 0 else {
            release(batch)
            return (nil, done, error)
        }
        return (batch, done, error)
    }

    /// `value` copied into `batch`: text and blobs into its buffer (text followed by a NUL).
    private func copy(_ value: OpaquePointer?, into batch: Batch) -> Cell {
        let type = sqlite3_value_type(value)
        switch type {
        case SQLITE_INTEGER: return Cell(type: type, integer: sqlite3_value_int64(value))
        case SQLITE_FLOAT: return Cell(type: type, real: sqlite3_value_double(value))
        case SQLITE_TEXT, SQLITE_BLOB:
            // Text before its length, as SQLite asks.
            let source = type == SQLITE_TEXT ? UnsafeRawPointer(sqlite3_value_text(value)) : sqlite3_value_blob(value)
            let count = Int(sqlite3_value_bytes(value))
            let offset = batch.byteCount
            let base = batch.bytes.grow(toHold: offset + count + 1)
            if let source, count > 0 { (base + offset).copyMemory(from: source, byteCount: count) }
            (base + offset + count).storeBytes(of: 0, as: UInt8.self)
            batch.byteCount = offset + count + 1
            let terminated = type == SQLITE_TEXT && (count == 0 || memchr(base + offset, 0, count) == nil)
            return Cell(type: type, offset: offset, count: count, terminated: terminated)
        default: return Cell(type: SQLITE_NULL)
        }
    }

    /// What the stored value `value` of a compressed column needs (looked up on this thread, which holds
    /// the connection); the dictionary it needs is kept by `batch`.
    private func slot(for value: OpaquePointer?, keepingIn batch: Batch) -> (SlotState, Slot) {
        // Only a value `coffer_column` passed through is a stored form: one computed before the fetch read
        // ahead (a sorter's rows, RETURNING's) arrives decoded, and may be a BLOB that begins 0xC0–0xC2.
        guard sqlite3_value_subtype(value) == CompressionCodec.passedThroughSubtype,
            sqlite3_value_type(value) == SQLITE_BLOB, let base = sqlite3_value_blob(value)
        else { return (.plain, Slot()) }
        let stored = UnsafeRawBufferPointer(start: base, count: Int(sqlite3_value_bytes(value)))
        switch codec.storedForm(of: stored) {
        case .plain: return (.plain, Slot())
        case .escaped: return (.escaped, Slot())
        case .failed(let message): return (.failed, Slot(message: message))
        case .compressed(let header, let dictionary):
            if let dictionary, !batch.dictionaries.contains(where: { $0 === dictionary }) {
                batch.dictionaries.append(dictionary)
            }
            return (.pending, Slot(header: header, dictionary: dictionary?.forDecompression))
        }
    }

    // MARK: Freeing

    /// Frees a batch's copies, slots and decoded bytes (on the second thread, which allocated them, or
    /// on the caller once the second thread has finished).
    func release(_ batch: Batch) {
        batch.cells.deallocate()
        batch.bytes.release()
        batch.slots.deinitialize(count: batch.slotCount)
        batch.slots.deallocate()
        batch.states.deinitialize(count: batch.slotCount)
        batch.states.deallocate()
        for memory in batch.decoded { memory.deallocate() }
        batch.decoded = []
        batch.dictionaries = []
    }
}
