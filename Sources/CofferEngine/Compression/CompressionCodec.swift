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
    /// What `coffer_decompress` and `coffer_column` decode with, on whichever thread steps the statement
    /// (the second thread while a fetch reads ahead: a filter's `coffer_decompress` still runs there).
    let decoder = FrameDecoder()
    /// The decoders of a fetch that reads ahead (one such fetch at a time on a connection): the second
    /// thread's, and the fetching thread's.
    private(set) lazy var aheadDecoder = FrameDecoder()
    private(set) lazy var fetchDecoder = FrameDecoder()
    private var digested: [UInt32: Digested] = [:]
    private var loadOrder: [UInt32] = []
    /// Compressed frames and decompressed values.
    private var output = ScratchBuffer()
    /// While true, `coffer_column` returns stored values as they are, marked with
    /// ``passedThroughSubtype``, for a fetch that decodes them itself (``RowPrefetcher``);
    /// `coffer_decompress` always decodes.
    var passesStoredValuesThrough = false
    /// The subtype (`sqlite3_result_subtype`) of a stored value `coffer_column` passed through.
    static let passedThroughSubtype: UInt32 = 0x43
    /// A private in-memory connection whose `SELECT ?1, …` statements turn decoded bytes back into
    /// `sqlite3_value`s for the record readers (``RowPrefetcher``); opened on first use.
    private var scratchHandle: OpaquePointer?
    private var scratchStatements: [Int: OpaquePointer] = [:]
    /// The second thread of batch inserts' compression ahead, made on first use.
    private var helper: CompressionHelper?
    /// The values batch inserts compressed ahead on this connection.
    var aheadCounts = CompressionAheadCounts()

    init(handle: OpaquePointer) { self.handle = handle }

    deinit {
        ZSTD_freeCCtx(compressor)
        output.release()
        for statement in scratchStatements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(scratchHandle)
    }

    /// The longest value SQLite accepts on this connection, in bytes.
    var lengthLimit: UInt64 { UInt64(sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, -1)) }

    /// `SELECT ?1, …, ?count` on the private in-memory connection, or nil when it cannot be opened.
    func scratchStatement(columns count: Int) -> OpaquePointer? {
        if let found = scratchStatements[count] { return found }
        if scratchHandle == nil {
            var opened: OpaquePointer?
            // No mutex: like the connection it belongs to, it is used by one thread at a time.
            let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
            guard sqlite3_open_v2(":memory:", &opened, flags, nil) == SQLITE_OK
            else {
                sqlite3_close_v2(opened)
                return nil
            }
            scratchHandle = opened
        }
        let sql = "SELECT " + (1...count).map { "?\($0)" }.joined(separator: ", ")
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(scratchHandle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            sqlite3_finalize(statement)
            return nil
        }
        scratchStatements[count] = statement
        return statement
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
    /// `coffer_column` (a record fetch's select list) returns the same, or, while
    /// ``passesStoredValuesThrough``, the stored value itself.
    func decompress(_ value: OpaquePointer?, into context: OpaquePointer?, passingThrough: Bool = false) {
        guard sqlite3_value_type(value) == SQLITE_BLOB, let bytes = sqlite3_value_blob(value) else {
            return sqlite3_result_value(context, value)
        }
        if passingThrough && passesStoredValuesThrough {
            // Marked, so that the reader can tell a value passed through from one decoded earlier: a
            // sorter's or RETURNING's rows were computed before the fetch read ahead, and keep no subtype.
            sqlite3_result_value(context, value)
            return sqlite3_result_subtype(context, Self.passedThroughSubtype)
        }
        let count = Int(sqlite3_value_bytes(value))
        let stored = UnsafeRawBufferPointer(start: bytes, count: count)
        switch storedForm(of: stored) {
        case .plain: return sqlite3_result_value(context, value)
        case .escaped: return sqlite3_result_blob(context, bytes + 1, Int32(count - 1), transientDestructor)
        case .failed(let message): return fail(context, message)
        case .compressed(let header, let dictionary):
            let decoded = decoder.decode(
                stored, header: header, dictionary: dictionary?.forDecompression, limit: lengthLimit,
                into: { output.reserve($0) })
            switch decoded {
            case .failure(.noMemory): return sqlite3_result_error_nomem(context)
            case .failure(.damaged(let message)): return fail(context, message)
            case .success(let plain) where header.isText:
                sqlite3_result_text(
                    context, plain.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(plain.count), transientDestructor)
            case .success(let plain):
                sqlite3_result_blob(context, plain.baseAddress, Int32(plain.count), transientDestructor)
            }
        }
    }

    /// What a stored BLOB is (see ``CompressedValue``).
    enum StoredForm {
        /// Not compressed: the value as it is.
        case plain
        /// An app's BLOB stored behind ``CompressedValue/escapedBlob``: the bytes after it.
        case escaped
        /// A compressed value, and the dictionary it names digested (nil for none).
        case compressed(CompressedValue.Header, Digested?)
        /// A value that cannot be read: what `coffer_decompress` reports for it.
        case failed(String)
    }

    /// What the stored BLOB bytes `stored` are, with the dictionary a compressed one needs looked up on
    /// this connection (so on its thread, in its transaction).
    func storedForm(of stored: UnsafeRawBufferPointer) -> StoredForm {
        guard let first = stored.first else { return .plain }
        if first == CompressedValue.escapedBlob { return .escaped }
        guard first == CompressedValue.compressedText || first == CompressedValue.compressedBlob else { return .plain }
        guard let header = CompressedValue.header(of: stored) else {
            return .failed("coffer_decompress: a damaged compressed value (its header cannot be read)")
        }
        guard header.dictionaryID != 0 else { return .compressed(header, nil) }
        guard let found = digestedForDecompression(header.dictionaryID) else {
            return .failed("coffer_decompress: dictionary \(header.dictionaryID) is missing from coffer_zstd_dictionary")
        }
        return .compressed(header, found)
    }

    private func fail(_ context: OpaquePointer?, _ message: String) {
        sqlite3_result_error(context, message, -1)
    }

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

    /// Dictionary `id` digested for decompression, as this connection's transaction sees it: nil when the
    /// database does not hold it. A fetch reading ahead keeps the object with the values that need it.
    func digestedForDecompression(_ id: UInt32) -> Digested? {
        if let found = digested[id], found.forDecompression != nil { return found }
        guard let bytes = storedDictionary(id) else { return nil }
        let ddict = bytes.withUnsafeBytes { ZSTD_createDDict($0.baseAddress, $0.count) }
        guard let ddict else { return nil }
        let found = entry(id)
        found.forDecompression = ddict
        return found
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

/// Decodes the frames of compressed values: a zstd decompression context and the buffer a frame is
/// rebuilt in. One thread at a time.
final class FrameDecoder {
    /// Why a frame did not decode.
    enum Failure: Error {
        case noMemory
        /// `coffer_decompress`'s message for it.
        case damaged(String)
    }

    private var context: OpaquePointer?
    /// The value's frame with its magic number put back.
    private var frame = ScratchBuffer()

    deinit {
        ZSTD_freeDCtx(context)
        frame.release()
    }

    /// Decodes the frame of the compressed value `stored` (whose header is `header`) with `dictionary`
    /// (nil for none) into the bytes `allocate` returns for its size (at least 1): those bytes, or why not.
    /// Values longer than `limit` bytes are refused as damaged.
    func decode(
        _ stored: UnsafeRawBufferPointer, header: CompressedValue.Header, dictionary: OpaquePointer?, limit: UInt64,
        into allocate: (Int) -> UnsafeMutableRawPointer
    ) -> Result<UnsafeRawBufferPointer, Failure> {
        guard let bytes = stored.baseAddress else { return .failure(.damaged("coffer_decompress: an empty value")) }
        let count = stored.count
        // The frame with its magic number put back in front.
        let magic = CompressedValue.frameMagic.count
        let frameCount = count - header.frameOffset + magic
        let frameBase = frame.reserve(frameCount)
        frameBase.copyMemory(from: CompressedValue.frameMagic, byteCount: magic)
        (frameBase + magic).copyMemory(from: bytes + header.frameOffset, byteCount: count - header.frameOffset)
        let size = ZSTD_getFrameContentSize(frameBase, frameCount)
        // ZSTD_CONTENTSIZE_UNKNOWN and _ERROR are the two largest values: both fail this check.
        guard size <= limit else {
            return .failure(.damaged("coffer_decompress: a damaged compressed value (its size cannot be read)"))
        }
        if context == nil { context = ZSTD_createDCtx() }
        guard let context else { return .failure(.noMemory) }
        let target = allocate(max(Int(size), 1))
        let produced =
            dictionary.map { ZSTD_decompress_usingDDict(context, target, Int(size), frameBase, frameCount, $0) }
            ?? ZSTD_decompressDCtx(context, target, Int(size), frameBase, frameCount)
        guard ZSTD_isError(produced) == 0, produced == Int(size) else {
            let name = String(cString: ZSTD_getErrorName(produced))
            return .failure(.damaged("coffer_decompress: a damaged compressed value (zstd: \(name))"))
        }
        return .success(UnsafeRawBufferPointer(start: target, count: Int(size)))
    }
}

/// A growable byte buffer reused from value to value (values pass through it, never stay).
struct ScratchBuffer {
    private var storage: UnsafeMutableRawPointer?
    private var capacity = 0

    /// The storage, nil before the first call.
    var base: UnsafeMutableRawPointer? { storage }

    /// At least `count` bytes, the bytes held so far kept (they may move).
    mutating func grow(toHold count: Int) -> UnsafeMutableRawPointer {
        if let storage, capacity >= count { return storage }
        let larger = max(count, 2 * capacity, 16_384)
        let allocated = UnsafeMutableRawPointer.allocate(byteCount: larger, alignment: 16)
        if let storage {
            allocated.copyMemory(from: storage, byteCount: capacity)
            storage.deallocate()
        }
        storage = allocated
        capacity = larger
        return allocated
    }

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
