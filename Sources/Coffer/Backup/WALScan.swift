import Foundation

/// Reads the committed frames of a WAL file the way SQLite's recovery does, without the key: the
/// 32-byte header (magic, version, page size, checkpoint sequence, salt-1, salt-2, checksum-1,
/// checksum-2), then frames of a 24-byte header (page number, database size after commit or 0,
/// salt-1, salt-2, checksum-1, checksum-2) and one page. A frame is valid when its salts are the
/// header's and its cumulative checksum (over the first 8 bytes of its header and its page, seeded by
/// the previous frame's) matches; frames after the last valid commit frame are not part of the database.
///
/// Checksum: for each pair of 32-bit words (x0, x1), s0 += x0 + s1, s1 += x1 + s0, with the words read
/// big-endian when the magic's low bit is set and little-endian otherwise.
enum WALScan {
    struct Frame {
        /// 1-based frame number.
        let index: Int
        let pageNumber: UInt32
        let page: [UInt8]
    }

    /// What a scan of a WAL found.
    struct Summary {
        /// The WAL's page size (0 when there is no valid WAL).
        var pageSize = 0
        /// The database size in pages after the last valid commit (0 when nothing is committed).
        var committedDatabasePages = 0
    }

    /// Passes each committed frame of the WAL at `path` to `body`, in order, holding in memory only the
    /// frames of the transaction being read (a missing file or one that is not a WAL has none).
    @discardableResult
    static func scan(path: String, committed body: (Frame) throws -> Void = { _ in }) throws -> Summary {
        var summary = Summary()
        guard let file = try? PageFile(path: path, writable: false) else { return summary }
        let header = try file.read(count: 32, at: 0)
        guard header.count == 32 else { return summary }
        let magic = ChangedPageTracker.bigEndian(header, 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else { return summary }
        let bigEndianWords = magic & 1 == 1
        let pageSize = Int(ChangedPageTracker.bigEndian(header, 8))
        guard pageSize >= 512, pageSize <= 65536 else { return summary }
        var sums = checksum(header[0..<24], seed: (0, 0), bigEndian: bigEndianWords)
        guard sums == (ChangedPageTracker.bigEndian(header, 24), ChangedPageTracker.bigEndian(header, 28)) else { return summary }
        summary.pageSize = pageSize
        let salts = (ChangedPageTracker.bigEndian(header, 16), ChangedPageTracker.bigEndian(header, 20))
        var pending: [Frame] = []
        var index = 1
        while true {
            let offset = 32 + (index - 1) * (pageSize + 24)
            let frame = try file.read(count: pageSize + 24, at: offset)
            guard frame.count == pageSize + 24,
                ChangedPageTracker.bigEndian(frame, 8) == salts.0, ChangedPageTracker.bigEndian(frame, 12) == salts.1
            else { break }
            sums = checksum(frame[0..<8], seed: sums, bigEndian: bigEndianWords)
            sums = checksum(frame[24...], seed: sums, bigEndian: bigEndianWords)
            guard sums == (ChangedPageTracker.bigEndian(frame, 16), ChangedPageTracker.bigEndian(frame, 20)) else { break }
            pending.append(Frame(index: index, pageNumber: ChangedPageTracker.bigEndian(frame, 0), page: Array(frame[24...])))
            let databasePages = ChangedPageTracker.bigEndian(frame, 4)
            if databasePages != 0 {
                for committed in pending { try body(committed) }
                pending.removeAll()
                summary.committedDatabasePages = Int(databasePages)
            }
            index += 1
        }
        return summary
    }

    /// Why opening `databasePath` through SQLite would be unsafe, or nil. A WAL whose last commit says the
    /// database has more pages than the file and the WAL together hold is damaged, and SQLite 3.15 would
    /// extend the main file to that size (10^9 pages: a terabyte) when it checkpoints the WAL on close.
    static func impossibleClaim(databasePath: String) throws -> String? {
        let summary = try scan(path: databasePath + "-wal")
        guard summary.committedDatabasePages > 0 else { return nil }
        let possible = mostPages(databasePath: databasePath, pageSize: summary.pageSize)
        guard summary.committedDatabasePages > possible else { return nil }
        return
            "the WAL's last commit says the database has \(summary.committedDatabasePages) pages; the file and its WAL hold at most \(possible)"
    }

    /// The most pages a database can have whose file and WAL together hold what they hold now: a page
    /// count claimed beyond it is damage.
    static func mostPages(databasePath: String, pageSize: Int) -> Int {
        let bytes = [databasePath, databasePath + "-wal"].reduce(0) {
            $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
        }
        return bytes / pageSize + 1
    }

    static func checksum(_ bytes: ArraySlice<UInt8>, seed: (UInt32, UInt32), bigEndian: Bool) -> (UInt32, UInt32) {
        var (s0, s1) = seed
        bytes.withUnsafeBytes { raw in
            let words = raw.count / 8
            for pair in 0..<words {
                var x0 = raw.loadUnaligned(fromByteOffset: pair * 8, as: UInt32.self)
                var x1 = raw.loadUnaligned(fromByteOffset: pair * 8 + 4, as: UInt32.self)
                if bigEndian {
                    x0 = UInt32(bigEndian: x0)
                    x1 = UInt32(bigEndian: x1)
                } else {
                    x0 = UInt32(littleEndian: x0)
                    x1 = UInt32(littleEndian: x1)
                }
                s0 = s0 &+ x0 &+ s1
                s1 = s1 &+ x1 &+ s0
            }
        }
        return (s0, s1)
    }
}
