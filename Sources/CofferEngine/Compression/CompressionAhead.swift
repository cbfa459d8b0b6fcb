import CSQLCipher
internal import CZstd
import Dispatch
import Foundation

// Compressing a batch's values on another core while the writer inserts the batch before it.
//
// `coffer_compress` compresses each value as SQLite evaluates the INSERT, on the writer's thread: at zstd
// level 1 with a dictionary that is 2 µs a chat message, about half again what SQLite takes to insert the
// row. `insertAll` hands the next chunk's values to `Connection.compressAhead(_:)`, which compresses them
// on a background thread with the dictionaries the writer digested, while the writer inserts the current
// chunk; `useCompressedAhead(_:)` then queues the results on the connection's codec, and `coffer_compress`
// returns a queued result when its value and dictionary are the ones queued next (byte for byte), and
// compresses as before otherwise. A result is what `coffer_compress` would store for that value, so
// nothing depends on the queue being used in order: a value it does not match is only compressed again.

/// A value a write is about to store through `coffer_compress`: its bytes, TEXT or BLOB, and the
/// dictionary it asks for.
package struct AheadValue: Sendable {
    package var bytes: [UInt8]
    package var isText: Bool
    package var dictionary: UInt32

    package init(bytes: [UInt8], isText: Bool, dictionary: UInt32) {
        self.bytes = bytes
        self.isText = isText
        self.dictionary = dictionary
    }
}

/// A value compressed ahead: the value, and its stored form (nil: it does not shrink, so it is stored as
/// `coffer_compress(value, NULL)` stores it).
struct AheadResult: Sendable {
    var value: AheadValue
    var stored: [UInt8]?
}

/// A compression context for jobs run off the connection's thread, freed with the last job that uses it.
final class AheadCompressor: @unchecked Sendable {
    let context: OpaquePointer?
    var buffer = ScratchBuffer()
    init() { context = CompressionCodec.makeCompressor() }
    deinit {
        ZSTD_freeCCtx(context)
        buffer.release()
    }
}

/// One chunk of values being compressed on a background thread.
package final class CompressionAhead: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var results: [AheadResult] = []

    /// Starts compressing `values` with `dictionaries` (digested on the connection's thread; the references
    /// keep them alive whatever the codec evicts meanwhile) through `compressor`.
    fileprivate init(_ values: [AheadValue], dictionaries: AheadDictionaries, compressor: AheadCompressor) {
        DispatchQueue.global(qos: .userInitiated).async { [self] in
            results = values.map { value in
                let dictionary = value.dictionary == 0 ? nil : dictionaries.digested[value.dictionary]
                let stored = value.bytes.withUnsafeBytes { bytes -> [UInt8]? in
                    guard let context = compressor.context else { return nil }
                    return CompressionCodec.storedForm(
                        of: bytes, isText: value.isText, id: dictionary == nil ? 0 : value.dictionary,
                        dictionary: dictionary, compressor: context, buffer: &compressor.buffer
                    ).map { [UInt8]($0) }
                }
                return AheadResult(value: value, stored: stored)
            }
            done.signal()
        }
    }

    /// The results, once the job is done (waits for it).
    fileprivate func wait() -> [AheadResult] {
        done.wait()
        return results
    }
}

/// The digested dictionaries a job compresses with (`ZSTD_CDict`s, which zstd lets threads share), and
/// the codec's entries that own them, held so that an eviction meanwhile does not free them.
private struct AheadDictionaries: @unchecked Sendable {
    var digested: [UInt32: OpaquePointer] = [:]
    var owners: [CompressionCodec.Digested] = []
}

extension CompressionCodec {
    /// Starts a job compressing `values` (after the one running, if any, has finished): its dictionaries
    /// are digested here, on the connection's thread.
    func startAhead(_ values: [AheadValue]) -> CompressionAhead {
        if let running = aheadJob { ahead += running.wait() }
        var dictionaries = AheadDictionaries()
        for id in Set(values.map(\.dictionary)) where id != 0 {
            if let cdict = compressionDictionary(id), let owner = digested[id] {
                dictionaries.digested[id] = cdict
                dictionaries.owners.append(owner)
            }
        }
        let compressor = aheadCompressor ?? AheadCompressor()
        aheadCompressor = compressor
        let job = CompressionAhead(values, dictionaries: dictionaries, compressor: compressor)
        aheadJob = job
        return job
    }

    /// Waits for `job` and queues its results for `coffer_compress`, after those still queued.
    func queue(_ job: CompressionAhead) {
        guard aheadJob === job else { return }
        aheadJob = nil
        if aheadNext == ahead.count {
            ahead.removeAll(keepingCapacity: true)
            aheadNext = 0
        }
        ahead += job.wait()
    }

    /// Drops every queued result (after waiting for a running job, whose compressor it shares).
    func endAhead() {
        _ = aheadJob?.wait()
        aheadJob = nil
        ahead.removeAll()
        aheadNext = 0
    }

    /// The next queued result when it is for these bytes and this dictionary; nil otherwise.
    func takeAhead(_ bytes: UnsafeRawBufferPointer, isText: Bool, dictionary: UInt32) -> AheadResult? {
        guard aheadNext < ahead.count, let base = bytes.baseAddress else { return nil }
        let next = ahead[aheadNext]
        guard next.value.isText == isText, next.value.dictionary == dictionary, next.value.bytes.count == bytes.count,
            next.value.bytes.withUnsafeBytes({ $0.baseAddress.map { memcmp($0, base, bytes.count) == 0 } ?? false })
        else { return nil }
        aheadNext += 1
        aheadUsed += 1
        return next
    }
}

extension Connection {
    /// Starts compressing `values` on another thread for this connection's `coffer_compress` (see this
    /// file's header); nil when the connection has no compression functions. Call on the connection's
    /// thread, then ``useCompressedAhead(_:)`` before the statement that stores them, and
    /// ``endCompressionAhead()`` when the write is done.
    package func compressAhead(_ values: [AheadValue]) -> CompressionAhead? {
        (compressionState as? CompressionCodec)?.startAhead(values)
    }

    /// Waits for `job` and hands its results to `coffer_compress`.
    package func useCompressedAhead(_ job: CompressionAhead) {
        (compressionState as? CompressionCodec)?.queue(job)
    }

    /// How many values `coffer_compress` took compressed ahead on this connection so far.
    package var compressedAheadCount: Int { (compressionState as? CompressionCodec)?.aheadUsed ?? 0 }

    /// Forgets every value compressed ahead and not used.
    package func endCompressionAhead() {
        (compressionState as? CompressionCodec)?.endAhead()
    }
}
