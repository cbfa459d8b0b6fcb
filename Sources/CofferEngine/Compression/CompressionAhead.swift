internal import CZstd
import Dispatch
import Foundation

// A batch insert's compression on a second thread: while the writer inserts one chunk of rows, the
// values of the next are compressed beside it, so a compressed column's insert costs about what SQLite's
// own insert costs rather than the sum of both (issue 40's W12).

/// One value for ``CompressionAhead``: what `coffer_compress(value, dictionary)` would be called with.
package struct CompressionRequest: Sendable {
    /// The value to store.
    package var value: DatabaseValue
    /// The dictionary id `coffer_compress` gets (0: plain zstd); nil stores the value plain, as
    /// `coffer_compress(value, NULL)` does for a column declared `.off`.
    package var dictionaryID: UInt32?

    package init(value: DatabaseValue, dictionaryID: UInt32?) {
        self.value = value
        self.dictionaryID = dictionaryID
    }

    /// The id `coffer_compress` compresses with for a requested SQL integer: 1 to 2³¹ − 1, else 0.
    package static func dictionaryID(requested: Int64) -> UInt32 {
        requested > 0 && requested <= Int64(Int32.max) ? UInt32(requested) : 0
    }
}

/// Compresses the values of a batch insert one chunk ahead of the writer, on a second thread.
///
/// The writer makes one per batch (``Connection/compressionAhead()``), hands it each chunk's values with
/// ``submit(_:inBackground:)`` before it inserts the previous chunk, and takes a chunk's stored forms
/// with ``complete(_:)`` when it reaches it. The two threads share a chunk value by value: the second
/// thread takes values from the front while the writer inserts the chunk before; when the writer gets
/// to the chunk, it takes the values still left from the same cursor and then waits only for the few the
/// other thread holds. So neither core idles while the other has work, and a busy second core costs
/// nothing but the hand-over. Every stored form is byte for byte what `coffer_compress` returns for the
/// same value and dictionary, so rows read the same whichever path wrote them. Dictionaries are looked
/// up on the writer, in its transaction, when a chunk is submitted, and kept alive by the chunk.
///
/// ``finish()`` (which the writer calls on every path out) waits until the second thread has nothing of
/// the batch left; the helper's one compression context is used by one job at a time (a serial queue).
package final class CompressionAhead {
    private let codec: CompressionCodec
    private let helper: CompressionHelper

    init(codec: CompressionCodec, helper: CompressionHelper) {
        self.codec = codec
        self.helper = helper
    }

    /// Queues `requests` (one chunk, in row order). With `inBackground`, the second thread starts on
    /// them; either way the writer takes what is left in ``complete(_:)``.
    package func submit(_ requests: [CompressionRequest], inBackground: Bool) -> CompressedChunk {
        var dictionaries: [UInt32: CompressionCodec.Digested] = [:]
        let items = requests.map { request -> CompressedChunk.Item in
            guard let id = request.dictionaryID else { return .init(value: request.value, dictionaryID: nil, dictionary: nil) }
            guard id != 0 else { return .init(value: request.value, dictionaryID: 0, dictionary: nil) }
            if dictionaries[id] == nil, let digested = codec.digestedForCompression(id) { dictionaries[id] = digested }
            // A dictionary the database does not hold falls back to plain zstd, as coffer_compress does.
            guard let found = dictionaries[id]?.forCompression else {
                return .init(value: request.value, dictionaryID: 0, dictionary: nil)
            }
            return .init(value: request.value, dictionaryID: id, dictionary: found)
        }
        let chunk = CompressedChunk(items: items, keeping: Array(dictionaries.values))
        if inBackground {
            let helper = helper
            helper.queue.async {
                if helper.compressor == nil { helper.compressor = CompressionCodec.makeCompressor() }
                chunk.work(with: helper.compressor, byHelper: true)
            }
        }
        return chunk
    }

    /// Returns when `chunk`'s stored forms are ready: the values nobody took yet are compressed here.
    package func complete(_ chunk: CompressedChunk) {
        chunk.work(with: codec.writerCompressor(), byHelper: false)
        chunk.waitUntilDone()
        codec.aheadCounts.values += chunk.count
        codec.aheadCounts.byHelper += chunk.compressedByHelper
    }

    /// Waits until the second thread holds nothing of this batch: every job queued before has run.
    package func finish() {
        helper.queue.sync {}
    }
}

/// The values of batch inserts a connection compressed ahead, and how many of them the second thread
/// did (the rest its writer did itself): what tests check that the path ran.
package struct CompressionAheadCounts: Sendable, Equatable {
    package var values = 0
    package var byHelper = 0
}

/// The second thread's side: a serial queue and its compression context, kept by the writer's codec.
final class CompressionHelper: @unchecked Sendable {
    let queue = DispatchQueue(label: "coffer.compression-ahead", qos: .userInitiated)
    /// Used only by jobs on `queue`, which run one at a time.
    var compressor: OpaquePointer?

    deinit { ZSTD_freeCCtx(compressor) }
}

/// One chunk of a batch insert's values and their stored forms, compressed by two threads that take
/// values from one cursor.
package final class CompressedChunk: @unchecked Sendable {
    struct Item {
        var value: DatabaseValue
        var dictionaryID: UInt32?
        var dictionary: OpaquePointer?
    }

    /// Values a thread takes at once: a lock round trip is about a hundredth of compressing them.
    private static let valuesPerClaim = 4

    private let items: [Item]
    /// The dictionaries `items` point into, kept alive while the chunk is.
    private let kept: [CompressionCodec.Digested]
    /// Room for every item's stored form, item `i`'s at `slots[i]`.
    private let arena: UnsafeMutableRawPointer
    private let slots: UnsafeMutablePointer<Int>
    /// Where each item's stored form starts in `arena` and its length; start −1: the value as it is.
    /// Each element is written by the one thread that took its item, and read after `finished` says so.
    private let starts: UnsafeMutablePointer<Int>
    private let counts: UnsafeMutablePointer<Int>
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var next = 0
    private var finished = 0
    private var helperValues = 0

    init(items: [Item], keeping kept: [CompressionCodec.Digested]) {
        self.items = items
        self.kept = kept
        slots = .allocate(capacity: max(items.count, 1))
        starts = .allocate(capacity: max(items.count, 1))
        counts = .allocate(capacity: max(items.count, 1))
        var offset = 0
        for (index, item) in items.enumerated() {
            slots[index] = offset
            offset += Self.capacity(item.value)
        }
        arena = .allocate(byteCount: max(offset, 1), alignment: 16)
    }

    deinit {
        arena.deallocate()
        slots.deallocate()
        starts.deallocate()
        counts.deallocate()
    }

    /// The number of values.
    package var count: Int { items.count }

    /// The stored bytes of value `index` (a BLOB: compressed, or an app's BLOB escaped), or nil when
    /// the value is stored as it is. Valid while the chunk lives, once ``CompressionAhead/complete(_:)``
    /// returned.
    package func stored(_ index: Int) -> UnsafeRawBufferPointer? {
        guard starts[index] >= 0 else { return nil }
        return UnsafeRawBufferPointer(start: arena + starts[index], count: counts[index])
    }

    /// The values the second thread compressed (read once the chunk is done).
    fileprivate var compressedByHelper: Int {
        condition.lock()
        defer { condition.unlock() }
        return helperValues
    }

    /// Takes values from the cursor and compresses them with `compressor` (the calling thread's own)
    /// until none is left.
    fileprivate func work(with compressor: OpaquePointer?, byHelper: Bool) {
        var done = 0
        while true {
            condition.lock()
            finished += done
            if byHelper { helperValues += done }
            if finished == items.count { condition.broadcast() }
            let first = next
            next = min(next + Self.valuesPerClaim, items.count)
            let end = next
            condition.unlock()
            guard first < end else { return }
            for index in first..<end { compress(index, with: compressor) }
            done = end - first
        }
    }

    fileprivate func waitUntilDone() {
        condition.lock()
        while finished < items.count { condition.wait() }
        condition.unlock()
    }

    private func compress(_ index: Int, with compressor: OpaquePointer?) {
        let slot = arena + slots[index]
        guard let stored = Self.storedForm(items[index], compressor: compressor, into: slot), let start = stored.baseAddress
        else {
            starts[index] = -1
            return
        }
        starts[index] = start - UnsafeRawPointer(arena)
        counts[index] = stored.count
    }

    /// The room `value`'s stored form may take: none for a value stored as it is in any case.
    private static func capacity(_ value: DatabaseValue) -> Int {
        switch value {
        case .text(let text): return CompressionCodec.compressedCapacity(text.utf8.count)
        case .blob(let data): return CompressionCodec.compressedCapacity(data.count)
        default: return 0
        }
    }

    /// What `coffer_compress(value, dictionary)` stores for `item`, written into `slot`: nil for the
    /// value as it is.
    private static func storedForm(
        _ item: Item, compressor: OpaquePointer?, into slot: UnsafeMutableRawPointer
    ) -> UnsafeRawBufferPointer? {
        switch item.value {
        case .text(var text):
            guard let id = item.dictionaryID, let compressor else { return nil }
            return text.withUTF8 { bytes in
                guard let source = bytes.baseAddress, bytes.count > 0 else { return nil }
                return CompressionCodec.compress(
                    source, count: bytes.count, isText: true, dictionaryID: id, dictionary: item.dictionary,
                    compressor: compressor, into: slot)
            }
        case .blob(let data):
            return data.withUnsafeBytes { bytes -> UnsafeRawBufferPointer? in
                guard let source = bytes.baseAddress, bytes.count > 0 else { return nil }
                if let id = item.dictionaryID, let compressor,
                    let stored = CompressionCodec.compress(
                        source, count: bytes.count, isText: false, dictionaryID: id, dictionary: item.dictionary,
                        compressor: compressor, into: slot)
                {
                    return stored
                }
                // Stored plain: an app's BLOB that begins with a compressed value's marker is escaped.
                guard CompressedValue.needsEscape(firstByte: bytes[0]) else { return nil }
                return CompressedValue.writeEscaped(source, count: bytes.count, into: slot)
            }
        default:
            return nil
        }
    }
}
