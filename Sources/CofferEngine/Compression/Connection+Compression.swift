import CSQLCipher
internal import CZstd
import Foundation

// The SQL side of compressed columns: `coffer_compress(value, dictionary)` and `coffer_decompress(value)`,
// registered on every connection a Database opens, and the dictionaries kept in the database.

extension Connection {
    /// The table that holds the dictionaries: in the database itself, so encrypted with everything else,
    /// and copied by backups, `repair` and `migrate` like any other table.
    package static let compressionDictionaryTable = "coffer_zstd_dictionary"

    /// Registers `coffer_compress`, `coffer_decompress` and `coffer_column` on this connection (every connection a
    /// ``Database`` opens, after its key is proven).
    ///
    /// `coffer_decompress(x)` returns the plain value of a stored one (anything not compressed comes back
    /// as it is), so raw SQL reads a compressed column as
    /// `SELECT coffer_decompress(body) FROM message`. `coffer_compress(x, dictionary)` is what record
    /// writes bind through; dictionary 0 is plain zstd, and NULL stores the value uncompressed (a BLOB
    /// that begins with a compressed value's marker escaped), which is what a `.off` column writes.
    package func registerCompression() throws {
        let codec = CompressionCodec(handle: handle)
        compressionState = codec
        let state = Unmanaged.passUnretained(codec).toOpaque()
        var code = sqlite3_create_function_v2(
            handle, "coffer_decompress", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, state,
            { context, _, arguments in
                guard let codec = Connection.codec(of: context), let arguments else { return }
                codec.decompress(arguments[0], into: context)
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code: code, sql: nil) }
        // A record fetch's select list reads compressed columns through `coffer_column`: the same value,
        // except while a fetch reads ahead and decodes them itself (see `RowPrefetcher`).
        // SQLITE_RESULT_SUBTYPE (SQLite 3.45 and later; older versions ignore the bit): it sets one.
        let resultSubtype: Int32 = 0x0100_0000
        code = sqlite3_create_function_v2(
            handle, "coffer_column", 1, SQLITE_UTF8 | resultSubtype, state,
            { context, _, arguments in
                guard let codec = Connection.codec(of: context), let arguments else { return }
                codec.decompress(arguments[0], into: context, passingThrough: true)
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code: code, sql: nil) }
        code = sqlite3_create_function_v2(
            handle, "coffer_compress", 2, SQLITE_UTF8, state,
            { context, _, arguments in
                guard let codec = Connection.codec(of: context), let arguments else { return }
                if sqlite3_value_type(arguments[1]) == SQLITE_NULL { return codec.storePlain(arguments[0], into: context) }
                let id = CompressionRequest.dictionaryID(requested: sqlite3_value_int64(arguments[1]))
                codec.compress(arguments[0], dictionary: id, into: context)
            }, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(code: code, sql: nil) }
    }

    /// The codec a function call runs on: its user data, which the connection's `compressionState` keeps
    /// alive for as long as the handle is open.
    private static func codec(of context: OpaquePointer?) -> CompressionCodec? {
        guard let state = sqlite3_user_data(context) else { return nil }
        return Unmanaged<CompressionCodec>.fromOpaque(state).takeUnretainedValue()
    }

    /// A batch insert's compression ahead on a second thread (see ``CompressionAhead``); nil on a
    /// single processor, where there is no second thread to give it to, or before
    /// ``registerCompression()``.
    package func compressionAhead() -> CompressionAhead? {
        guard ProcessInfo.processInfo.activeProcessorCount > 1, let codec = compressionState as? CompressionCodec
        else { return nil }
        return codec.ahead()
    }

    /// The values this connection's batch inserts compressed ahead, and how many of them the second
    /// thread did.
    package var compressionAheadCounts: CompressionAheadCounts {
        (compressionState as? CompressionCodec)?.aheadCounts ?? CompressionAheadCounts()
    }

    // MARK: Dictionaries

    /// Trains a zstd dictionary on `samples` (zstd's own trainer, `ZDICT_trainFromBuffer`) and stores it
    /// under `id`, so that columns declared with `.dictionary(id)` compress with it from now on.
    ///
    /// Samples are values like those the column will hold: a few hundred at least (zstd refuses too few
    /// or too small a total), a few thousand is better. Run it on the writer:
    ///
    /// ```swift
    /// try database.write { db in
    ///     let rows = try db.fetchAll(sql: "SELECT coffer_decompress(body) AS body FROM message LIMIT 5000")
    ///     let samples = rows.compactMap { row -> String? in row["body"] }
    ///     try db.trainCompressionDictionary(id: 1, from: samples)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - id: the dictionary's id, 1 to 2³¹ − 1: what a column declaration names and a stored value
    ///     records. Ids below 128 take one byte in each value.
    ///   - samples: sample values (text or bytes).
    ///   - maximumSize: the dictionary's largest size in bytes (zstd's default is 110 KiB; smaller
    ///     dictionaries cost less memory per connection).
    /// - Returns: the dictionary's bytes (also stored).
    /// - Throws: ``CofferError/compressionFailed`` when zstd cannot train on the samples or `id` holds
    ///   another dictionary.
    @discardableResult
    public func trainCompressionDictionary(
        id: Int, from samples: [some DataProtocol], maximumSize: Int = 64 * 1024
    ) throws -> Data {
        let dictionary = try Self.trainDictionary(from: samples, maximumSize: maximumSize)
        try addCompressionDictionary(dictionary, id: id)
        return dictionary
    }

    /// Trains a dictionary on text samples (their UTF-8 bytes) and stores it under `id`, as the variant
    /// for byte samples does.
    @discardableResult
    public func trainCompressionDictionary(id: Int, from samples: [String], maximumSize: Int = 64 * 1024) throws -> Data {
        try trainCompressionDictionary(id: id, from: samples.map { Array($0.utf8) }, maximumSize: maximumSize)
    }

    /// Stores a dictionary trained elsewhere (one an app ships, or another database's) under `id`.
    ///
    /// Ids are never reused for other contents: storing the same dictionary again does nothing, storing
    /// another under a taken id throws, because values compressed with the first would no longer decode.
    ///
    /// - Throws: ``CofferError/compressionFailed`` for an id out of range, an empty dictionary, or an id
    ///   that holds another dictionary.
    public func addCompressionDictionary(_ dictionary: Data, id: Int) throws {
        guard id >= 1 && id <= Int(Int32.max) else {
            throw CofferError(code: .compressionFailed, message: "a dictionary id is 1 to \(Int32.max), not \(id)")
        }
        guard !dictionary.isEmpty else {
            throw CofferError(code: .compressionFailed, message: "an empty compression dictionary")
        }
        let table = Self.compressionDictionaryTable
        try execute(sql: "CREATE TABLE IF NOT EXISTS \(table)(id INTEGER PRIMARY KEY, dict BLOB NOT NULL)")
        if let existing = try fetchValue(Data.self, sql: "SELECT dict FROM \(table) WHERE id = ?", arguments: [Int64(id)]) {
            guard existing == dictionary else {
                throw CofferError(
                    code: .compressionFailed,
                    message: "dictionary \(id) already holds another dictionary: values compressed with it need it, take a new id"
                )
            }
            return
        }
        try execute(sql: "INSERT INTO \(table)(id, dict) VALUES (?, ?)", arguments: [Int64(id), dictionary])
        (compressionState as? CompressionCodec)?.forget(UInt32(id))
    }

    /// The ids of the dictionaries the database holds, in order.
    public func compressionDictionaryIDs() throws -> [Int] {
        let table = Self.compressionDictionaryTable
        let exists = try fetchValue(
            Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table])
        guard exists == 1 else { return [] }
        return try fetchAll(sql: "SELECT id FROM \(table) ORDER BY id").map { try $0.decode(Int.self, at: 0) }
    }

    /// zstd's trainer on `samples`: a dictionary of at most `maximumSize` bytes.
    package static func trainDictionary(from samples: [some DataProtocol], maximumSize: Int) throws -> Data {
        guard maximumSize >= 256 else {
            throw CofferError(code: .compressionFailed, message: "a dictionary needs at least 256 bytes, not \(maximumSize)")
        }
        var joined: [UInt8] = []
        var sizes: [Int] = []
        for sample in samples where !sample.isEmpty {
            joined.append(contentsOf: sample)
            sizes.append(sample.count)
        }
        guard !sizes.isEmpty else {
            throw CofferError(code: .compressionFailed, message: "no samples to train a compression dictionary on")
        }
        var dictionary = [UInt8](repeating: 0, count: maximumSize)
        let size = dictionary.withUnsafeMutableBytes { buffer in
            joined.withUnsafeBytes { samplesBuffer in
                ZDICT_trainFromBuffer(
                    buffer.baseAddress, buffer.count, samplesBuffer.baseAddress, sizes, UInt32(sizes.count))
            }
        }
        guard ZDICT_isError(size) == 0 else {
            throw CofferError(
                code: .compressionFailed,
                message: "zstd cannot train a dictionary on \(sizes.count) samples of \(joined.count) bytes: "
                    + String(cString: ZDICT_getErrorName(size)))
        }
        return Data(dictionary[0..<size])
    }
}
