import CofferEngine
import Foundation

// `insertAll` for a table with compressed columns: each chunk's values are compressed on another core
// while the writer inserts the chunk before (see `CompressionAhead.swift` in CofferEngine).

extension TableRecord {
    /// The smallest `insertAll` that compresses ahead: below it, starting a job costs more than it saves.
    static var compressAheadMinimum: Int { 32 }

    /// Whether `insertAll` of `records` compresses ahead: the table has a column compressed when written,
    /// there is another core to do it on, and enough records to keep it busy.
    static func compressesAhead(_ records: some Sequence<Self>) -> Bool {
        records.underestimatedCount >= compressAheadMinimum && ProcessInfo.processInfo.activeProcessorCount > 1
            && columnDefinitions.contains { $0.compression != nil && $0.compression != .off }
    }

    /// Inserts `records` with `statement` (the table's insert), chunk by chunk, each chunk's compressed
    /// values compressed on another thread while the chunk before is inserted. Returns the rowids.
    static func insertCompressingAhead(_ records: some Sequence<Self>, _ statement: Statement, _ db: Connection) throws
        -> [Int64]
    {
        let columns = AheadColumns(Self.self)
        var iterator = records.makeIterator()
        // A small first chunk, so that the writer starts inserting soon; then larger ones.
        func nextChunk(_ size: Int) -> [Self] {
            var chunk: [Self] = []
            while chunk.count < size, let record = iterator.next() { chunk.append(record) }
            return chunk
        }
        defer { db.endCompressionAhead() }
        var chunk = nextChunk(16)
        var job = db.compressAhead(try columns.values(of: chunk))
        var rowIDs: [Int64] = []
        while !chunk.isEmpty {
            let following = nextChunk(64)
            if let job { db.useCompressedAhead(job) }
            job = following.isEmpty ? nil : db.compressAhead(try columns.values(of: following))
            for record in chunk {
                try statement.execute(binding: record)
                rowIDs.append(db.changesCount > 0 ? db.lastInsertedRowID : 0)
            }
            chunk = following
        }
        return rowIDs
    }
}

/// A table's columns compressed when written, and how each row picks its dictionary: what
/// `coffer_compress(?n, dictionary)` receives for each, in column order.
private struct AheadColumns {
    /// The column's index in the record's values, and the dictionary id its row asks for.
    let columns: [(index: Int, dictionary: ([DatabaseValue]) -> UInt32)]

    init<Table: TableRecord>(_ type: Table.Type) {
        let definitions = Table.columnDefinitions
        columns = definitions.enumerated().compactMap { index, column in
            switch column.compression {
            case nil, .off?: return nil
            case .zstd?: return (index, { _ in 0 })
            case .dictionary(let id)?: return (index, { _ in Self.functionID(Int64(id)) })
            case .dictionaries(let by, let ids, let otherwise)?:
                guard let picker = definitions.firstIndex(where: { $0.name == by }) else { return nil }
                return (
                    index,
                    { values in
                        // As the statement's CASE compares: an integer, or a real equal to one.
                        let key: Int64? =
                            switch values[picker] {
                            case .integer(let value): value
                            case .real(let value) where value.rounded() == value && abs(value) < 9e18: Int64(value)
                            default: nil
                            }
                        return Self.functionID(Int64(key.flatMap { ids[$0] } ?? otherwise))
                    }
                )
            }
        }
    }

    /// The dictionary id `coffer_compress` reads from its argument (an id out of range is 0: none).
    private static func functionID(_ id: Int64) -> UInt32 { id > 0 && id <= Int64(Int32.max) ? UInt32(id) : 0 }

    /// The values of `records` that `coffer_compress` will be asked to compress, in the order it will be.
    func values<Table: TableRecord>(of records: [Table]) throws -> [AheadValue] {
        var result: [AheadValue] = []
        result.reserveCapacity(records.count * columns.count)
        for record in records {
            let values = try record.columnValues()
            for (index, dictionary) in columns {
                switch values[index] {
                case .text(let text) where !text.isEmpty:
                    result.append(AheadValue(bytes: Array(text.utf8), isText: true, dictionary: dictionary(values)))
                case .blob(let data) where !data.isEmpty:
                    result.append(AheadValue(bytes: [UInt8](data), isText: false, dictionary: dictionary(values)))
                default:
                    continue  // NULL, numbers and empty values are stored as they are, not compressed
                }
            }
        }
        return result
    }
}
