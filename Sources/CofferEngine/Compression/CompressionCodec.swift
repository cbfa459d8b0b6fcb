import CSQLCipher
internal import CZstd
import Foundation

/// One connection's zstd state: a compression and a decompression context, the dictionaries it has
/// digested, and the scratch buffers values pass through. What `coffer_compress` and `coffer_decompress`
/// run on (see `Connection+Compression.swift`); the value format is ``CompressedValue``'s.
///
/// A connection is used by one thread at a time, so nothing here locks. Dictionaries are read from
/// `coffer_zstd_dictionary` on the connection itself (inside the statement that needs one, so a reader
/// sees the dictionaries of its own snapshot) and digested on first use: a `ZSTD_DDict` for reading, and
/// on the writer a `ZSTD_CDict` for writing. At most ``dictionaryLimit`` are kept; a load beyond that
/// evicts the oldest. A digested dictionary costs about its own size plus zstd's tables (measured in the
/// Compression article); ids are never reused for other contents (``Connection/addCompressionDictionary(_:id:)``
/// refuses), so a cached dictionary never goes stale, and adding one drops this connection's entry for
/// its id in case a rolled-back transaction had cached another.
final class CompressionCodec {
    /// zstd level 1. On W12's 100,000 chat messages with a 32 KiB dictionary (`gcc -O2` against libzstd
    /// 1.5.4, thread CPU time, 2026-11-29) it compresses a value in 2.2 µs to 0.704 of its bytes where level
    /// 3 (zstd's default) takes 3.3 µs for 0.688, and level 19 50 µs for 0.657: on values of a few hundred
    /// bytes the dictionary does the work, not the match search. Its `ZSTD_CDict` takes 78 KiB (430 at
    /// level 3). Decoding does not depend on the level.
    static let level: Int32 = 1
    /// The dictionaries one connection keeps digested.
    static let dictionaryLimit = 8

    private let handle: OpaquePointer
    private var compressor: OpaquePointer?
    private var decompressor: OpaquePointer?
    private var digested: [UInt32: Digested] = [:]
    private var loadOrder: [UInt32] = []
    /// The value's frame with its magic number put back, for decoding.
    private var frame = ScratchBuffer()
    /// Compressed frames and decompressed values.
    private var output = ScratchBuffer()
    /// The second thread of batch inserts' compression ahead, made on first use.
    private var helper: CompressionHelper?
    /// The values batch inserts compressed ahead on this connection.
    var aheadCounts = CompressionAheadCounts()

    init(handle: OpaquePointer) { self.handle = handle }

    deinit {
        ZSTD_freeCCtx(compressor)
        ZSTD_freeDCtx(decompressor)
        frame.release()
        output.release()
    }

    /// Forgets the digested dictionary `id` (after this connection stored a dictionary under it).
    func forget(_ id: UInt32) {
        digested[id] = nil
        loadOrder.removeAll { $0 == id }
    }

    // MARK: Compressing

    /// A batch insert's compression ahead, on this (the writer's) connection.
    func ahead() -> CompressionAhead {
        let helper = helper ?? CompressionHelper()
        self.helper = helper
        return CompressionAhead(codec: self, helper: helper)
    }

    /// The writer's own compression context.
    func writerCompressor() -> OpaquePointer? {
        if compressor == nil { compressor = Self.makeCompressor() }
        return compressor
    }

    /// What `coffer_compress(value, dictionary)` returns for `value`: the stored form (see
    /// ``CompressedValue``). A dictionary the database does not hold (yet) falls back to plain zstd:
    /// the value names what it was compressed with either way.
    func compress(_ value: OpaquePointer?, dictionary requested: UInt32, into context: OpaquePointer?) {
        let type = sqlite3_value_type(value)
        guard type == SQLITE_TEXT || type == SQLITE_BLOB else { return sqlite3_result_value(context, value) }
        let isText = type == SQLITE_TEXT
        // Text first, then its length: sqlite3_value_bytes after sqlite3_value_text counts the UTF-8 bytes.
        let source = isText ? UnsafeRawPointer(sqlite3_value_text(value)) : sqlite3_value_blob(value)
        let count = Int(sqlite3_value_bytes(value))
        guard let source, count > 0 else { return sqlite3_result_value(context, value) }
        var id = requested
        let dictionary = id == 0 ? nil : compressionDictionary(id)
        if dictionary == nil { id = 0 }
        guard let compressor = writerCompressor() else { return sqlite3_result_error_nomem(context) }
        let base = output.reserve(Self.compressedCapacity(count))
        if let stored = Self.compress(
            source, count: count, isText: isText, dictionaryID: id, dictionary: dictionary, compressor: compressor,
            into: base)
        {
            return sqlite3_result_blob(context, stored.baseAddress, Int32(stored.count), transientDestructor)
        }
        // It does not shrink: stored as it is (an ambiguous BLOB escaped).
        storePlain(value, into: context)
    }

    /// A compression context as every compressed value is written: zstd level ``level``, no dictionary id
    /// and no checksum in the frame (see ``CompressedValue``).
    static func makeCompressor() -> OpaquePointer? {
        let compressor = ZSTD_createCCtx()
        ZSTD_CCtx_setParameter(compressor, ZSTD_c_compressionLevel, level)
        ZSTD_CCtx_setParameter(compressor, ZSTD_c_dictIDFlag, 0)
        ZSTD_CCtx_setParameter(compressor, ZSTD_c_checksumFlag, 0)
        return compressor
    }

    /// The bytes ``compress(_:count:isText:dictionaryID:dictionary:compressor:into:)`` needs for a value
    /// of `count` bytes.
    static func compressedCapacity(_ count: Int) -> Int { 8 + ZSTD_compressBound(count) }

    /// Writes the stored form of the `count` bytes at `source` (see ``CompressedValue``), compressed with
    /// `dictionary` (digested from dictionary `dictionaryID`; nil and 0 for none), into `base`, which
    /// holds ``compressedCapacity(_:)`` bytes: the stored bytes, inside `base`, or nil when the value
    /// does not shrink. What `coffer_compress` and a batch insert's compression ahead both run.
    static func compress(
        _ source: UnsafeRawPointer, count: Int, isText: Bool, dictionaryID: UInt32, dictionary: OpaquePointer?,
        compressor: OpaquePointer, into base: UnsafeMutableRawPointer
    ) -> UnsafeRawBufferPointer? {
        var header: [UInt8] = [isText ? CompressedValue.compressedText : CompressedValue.compressedBlob]
        LEB128.append(UInt64(dictionaryID), to: &header)
        // The frame goes at offset 8; its body starts after the 4-byte magic, at 12, and the header (at
        // most 6 bytes) is written over the magic just before it, so the stored value is one run.
        let bound = ZSTD_compressBound(count)
        ZSTD_CCtx_refCDict(compressor, dictionary)
        let written = ZSTD_compress2(compressor, base + 8, bound, source, count)
        let start = base + 8 + CompressedValue.frameMagic.count - header.count
        let stored = header.count + written - CompressedValue.frameMagic.count
        guard ZSTD_isError(written) == 0 && stored < count else { return nil }
        start.copyMemory(from: header, byteCount: header.count)
        return UnsafeRawBufferPointer(start: start, count: stored)
    }

    /// What `coffer_compress(value, NULL)` returns: `value` uncompressed, a BLOB that begins with one of
    /// ``CompressedValue``'s markers escaped, so that `coffer_decompress` reads it back as it was. This is
    /// how a column or store declared `.off` writes.
    func storePlain(_ value: OpaquePointer?, into context: OpaquePointer?) {
        guard sqlite3_value_type(value) == SQLITE_BLOB, let source = sqlite3_value_blob(value) else {
            return sqlite3_result_value(context, value)
        }
        let count = Int(sqlite3_value_bytes(value))
        guard count > 0, CompressedValue.needsEscape(firstByte: source.load(as: UInt8.self)) else {
            return sqlite3_result_value(context, value)
        }
        let escaped = CompressedValue.writeEscaped(source, count: count, into: output.reserve(count + 1))
        sqlite3_result_blob(context, escaped.baseAddress, Int32(escaped.count), transientDestructor)
    }

    // MARK: Decompressing

    /// What `coffer_decompress(value)` returns: the plain value, or an SQL error for a damaged value or
    /// one whose dictionary the database does not hold (never bytes decoded with the wrong dictionary).
    func decompress(_ value: OpaquePointer?, into context: OpaquePointer?) {
        guard sqlite3_value_type(value) == SQLITE_BLOB, let bytes = sqlite3_value_blob(value) else {
            return sqlite3_result_value(context, value)
        }
        let count = Int(sqlite3_value_bytes(value))
        let stored = UnsafeRawBufferPointer(start: bytes, count: count)
        if stored.first == CompressedValue.escapedBlob {
            return sqlite3_result_blob(context, bytes + 1, Int32(count - 1), transientDestructor)
        }
        guard let first = stored.first, first == CompressedValue.compressedText || first == CompressedValue.compressedBlob
        else { return sqlite3_result_value(context, value) }
        guard let header = CompressedValue.header(of: stored) else {
            return fail(context, "coffer_decompress: a damaged compressed value (its header cannot be read)")
        }
        var dictionary: OpaquePointer?
        if header.dictionaryID != 0 {
            guard let found = decompressionDictionary(header.dictionaryID) else {
                return fail(
                    context,
                    "coffer_decompress: dictionary \(header.dictionaryID) is missing from coffer_zstd_dictionary")
            }
            dictionary = found
        }
        // The frame with its magic number put back in front.
        let magic = CompressedValue.frameMagic.count
        let frameCount = count - header.frameOffset + magic
        let frameBase = frame.reserve(frameCount)
        frameBase.copyMemory(from: CompressedValue.frameMagic, byteCount: magic)
        (frameBase + magic).copyMemory(from: bytes + header.frameOffset, byteCount: count - header.frameOffset)
        let size = ZSTD_getFrameContentSize(frameBase, frameCount)
        let limit = UInt64(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1))
        // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values: both fail this check.
        guard size <= limit else {
            return fail(context, "coffer_decompress: a damaged compressed value (its size cannot be read)")
        }
        if decompressor == nil { decompressor = ZSTD_createDCtx() }
        guard let decompressor else { return sqlite3_result_error_nomem(context) }
        let target = output.reserve(max(Int(size), 1))
        let produced =
            dictionary.map { ZSTD_decompress_usingDDict(decompressor, target, Int(size), frameBase, frameCount, $0) }
            ?? ZSTD_decompressDCtx(decompressor, target, Int(size), frameBase, frameCount)
        guard ZSTD_isError(produced) == 0, produced == Int(size) else {
            return fail(context, "coffer_decompress: a damaged compressed value (zstd: \(errorName(produced)))")
        }
        if header.isText {
            sqlite3_result_text(context, target.assumingMemoryBound(to: CChar.self), Int32(size), transientDestructor)
        } else {
            sqlite3_result_blob(context, target, Int32(size), transientDestructor)
        }
    }

    private func fail(_ context: OpaquePointer?, _ message: String) {
        sqlite3_result_error(context, message, -1)
    }

    private func errorName(_ code: Int) -> String { String(cString: ZSTD_getErrorName(code)) }

    // MARK: Dictionaries

    /// A dictionary digested for one direction or both; zstd's objects are freed with it. Sendable: a
    /// chunk compressed on the helper thread keeps it alive, and a `ZSTD_CDict` is read-only once made,
    /// which zstd documents as safe to share between threads.
    final class Digested: @unchecked Sendable {
        var forCompression: OpaquePointer?
        var forDecompression: OpaquePointer?
        deinit {
            ZSTD_freeCDict(forCompression)
            ZSTD_freeDDict(forDecompression)
        }
    }

    private func compressionDictionary(_ id: UInt32) -> OpaquePointer? {
        digestedForCompression(id)?.forCompression
    }

    /// Dictionary `id` digested for compression, as this connection's transaction sees it: nil when the
    /// database does not hold it. A batch insert's compression ahead keeps the object, so an eviction
    /// while its second thread still compresses with it frees nothing under it.
    func digestedForCompression(_ id: UInt32) -> Digested? {
        if let found = digested[id], found.forCompression != nil { return found }
        guard let bytes = storedDictionary(id) else { return nil }
        let cdict = bytes.withUnsafeBytes { ZSTD_createCDict($0.baseAddress, $0.count, Self.level) }
        guard let cdict else { return nil }
        let found = entry(id)
        found.forCompression = cdict
        return found
    }

    private func decompressionDictionary(_ id: UInt32) -> OpaquePointer? {
        if let found = digested[id]?.forDecompression { return found }
        guard let bytes = storedDictionary(id) else { return nil }
        let ddict = bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
        entry(id).forDecompression = ddict
        return ddict
    }

    private func entry(_ id: UInt32) -> Digested {
        if let found = digested[id] { return found }
        if loadOrder.count >= Self.dictionaryLimit { forget(loadOrder[0]) }
        let created = Digested()
        digested[id] = created
        loadOrder.append(id)
        return created
    }

    /// The dictionary's bytes as the connection's own transaction sees them; nil when it holds none
    /// (or no dictionary table).
    private func storedDictionary(_ id: UInt32) -> [UInt8]? {
        var statement: OpaquePointer?
        let sql = "SELECT dict FROM coffer_zstd_dictionary WHERE id = ?"
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK else {
            sqlite3_finalize(statement)
            return nil
        }
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, Int64(id))
        guard sqlite3_step(statement) == SQLITE_ROW, let blob = sqlite3_column_blob(statement, 0) else { return nil }
        let count = Int(sqlite3_column_bytes(statement, 0))
        return [UInt8](UnsafeRawBufferPointer(start: blob, count: count))
    }
}

/// A growable byte buffer reused from value to value (values pass through it, never stay).
private struct ScratchBuffer {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0

    /// At least `count` bytes, valid until the next call.
    mutating func reserve(_ count: Int) -> UnsafeMutableRawPointer {
        if let storage, capacity >= count { return storage }
        storage?.deallocate()
        capacity = max(count, 2 * capacity, 256)
        let allocated = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 16)
        storage = allocated
        return allocated
    }

    func release() { storage?.deallocate() }
}
