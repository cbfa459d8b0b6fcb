import CSQLCipher
import CofferEngine
import CofferRecords
import Foundation

// Keeping a full-text index compact. Each write adds a small segment (b-tree) of terms; queries read every
// segment, so segments are merged: `optimize` into one (costly, all at once), `merge` a few pages at a
// time (FTS4's and FTS5's incremental merge), `rebuild` from the content table. FTS5 also merges by itself
// as it is written (`automerge`, 4 segments a level by default).

extension FullTextIndex {
    /// Empties the index and fills it again from the content table (after the index was damaged, or
    /// after rows were written with the triggers missing).
    public func rebuild(_ db: Connection) throws { try command(db, "rebuild") }

    /// Merges every segment into one: the fastest index to query, at the cost of rewriting all of it.
    public func optimize(_ db: Connection) throws { try command(db, "optimize") }

    /// Runs one step of the incremental merge: at most `pages` pages of segments written, merging
    /// levels holding at least `minimumSegments` segments (2…16 for FTS5, whose `usermerge` it sets). Returns false when there was nothing left
    /// to merge.
    ///
    /// ```swift
    /// try database.write { db in while try Message.fullTextIndex.merge(db, pages: 200) {} }
    /// ```
    @discardableResult
    public func merge(_ db: Connection, pages: Int = 200, minimumSegments: Int = 8) throws -> Bool {
        let table = try SQLIdentifier.validated(name)
        // FTS4 and FTS5 document the same test: a merge step that changed fewer than two rows found no work.
        switch engine {
        case .fts4:
            let before = sqlite3_total_changes(db.handle)
            try command(db, "merge=\(max(pages, 1)),\(max(minimumSegments, 2))")
            return sqlite3_total_changes(db.handle) - before >= 2
        case .fts5:
            // FTS5 merges a level once it holds `usermerge` (2…16) segments, a setting kept in the index.
            let segments = min(max(minimumSegments, 2), 16)
            try db.execute(sql: "INSERT INTO \(table)(\(table), rank) VALUES ('usermerge', ?)", arguments: [segments])
            let before = sqlite3_total_changes(db.handle)
            try db.execute(sql: "INSERT INTO \(table)(\(table), rank) VALUES ('merge', ?)", arguments: [max(pages, 1)])
            return sqlite3_total_changes(db.handle) - before >= 2
        }
    }

    /// True when some level of the index holds at least `minimumSegments` segments, so that ``merge(_:pages:minimumSegments:)``
    /// has work (a read: run it on a reader).
    public func needsMerge(_ db: Connection, minimumSegments: Int = 8) throws -> Bool {
        switch engine {
        case .fts4:
            let segments = try SQLIdentifier.validated(name + "_segdir")
            return try db.fetchValue(
                Bool.self,
                sql: "SELECT EXISTS (SELECT 1 FROM \(segments) GROUP BY level HAVING count(*) >= ?)",
                arguments: [max(minimumSegments, 2)]) ?? false
        case .fts5:
            let data = try SQLIdentifier.validated(name + "_data")
            // FTS5 keeps its levels in one record, row 10 of `<name>_data` (FTS5_STRUCTURE_ROWID).
            let record = try db.fetchValue(Data.self, sql: "SELECT block FROM \(data) WHERE id = 10") ?? Data()
            // An unreadable record says "merge": the merge step itself then reports whether it found work.
            guard let levels = FTS5Structure.segmentsPerLevel(record) else { return true }
            return levels.contains { $0 >= min(max(minimumSegments, 2), 16) }
        }
    }

    /// Checks that the index agrees with the content table; throws `CofferError.corrupt` when not.
    public func checkIntegrity(_ db: Connection) throws {
        switch engine {
        case .fts4: try command(db, "integrity-check")
        case .fts5:
            // rank 1: also compare the index with the external content table (FTS5 in SQLite 3.44 and later).
            let table = try SQLIdentifier.validated(name)
            try db.execute(sql: "INSERT INTO \(table)(\(table), rank) VALUES ('integrity-check', 1)")
        }
    }

    private func command(_ db: Connection, _ command: String) throws {
        let table = try SQLIdentifier.validated(name)
        try db.execute(sql: "INSERT INTO \(table)(\(table)) VALUES (?)", arguments: [command])
    }
}

/// FTS5's structure record (fts5_index.c, `fts5StructureDecode`): a 4-byte cookie, the 4 bytes
/// `FF 00 00 01` in the format SQLite 3.45 introduced, then varints: levels, segments, write counter, and
/// for each level the segments being merged, its segment count and each segment's 3 varints (8 in the
/// newer format).
enum FTS5Structure {
    /// The number of segments on each level, or nil when `record` does not read as a structure record.
    static func segmentsPerLevel(_ data: Data) -> [Int]? {
        let record = [UInt8](data)
        guard record.count >= 4 else { return nil }
        var position = 4
        let version2 = record.count >= 8 && record[4..<8].elementsEqual([0xFF, 0x00, 0x00, 0x01])
        if version2 { position = 8 }
        func varint() -> UInt64? {
            var value: UInt64 = 0
            for index in 0..<9 {
                guard position < record.count else { return nil }
                let byte = record[position]
                position += 1
                if index == 8 { return value << 8 | UInt64(byte) }
                value = value << 7 | UInt64(byte & 0x7F)
                if byte & 0x80 == 0 { return value }
            }
            return value
        }
        guard let levels = varint(), levels <= 2_000, varint() != nil, varint() != nil else { return nil }
        var counts: [Int] = []
        for _ in 0..<levels {
            guard varint() != nil, let segments = varint(), segments <= 2_000 else { return nil }
            for _ in 0..<segments * (version2 ? 8 : 3) where varint() == nil { return nil }
            counts.append(Int(segments))
        }
        return counts
    }
}
