import Foundation

/// Reads the committed frames of a WAL file the way SQLite's recovery does, without the key: frames are
/// read while their checksum chain holds (``WALFrames``), and frames after the last commit frame of that
/// run are not part of the database.
public enum WALScan {
    /// One committed frame.
    public struct Frame: Sendable {
        /// 1-based frame number.
        public let index: Int
        /// The page the frame holds.
        public let pageNumber: UInt32
        /// The page, as stored (encrypted for SQLCipher).
        public let page: [UInt8]
    }

    /// What a scan of a WAL found.
    public struct Summary: Sendable {
        /// The WAL's page size (0 when there is no valid WAL).
        public var pageSize = 0
        /// The database size in pages after the last valid commit (0 when nothing is committed).
        public var committedDatabasePages = 0
    }

    /// Passes each committed frame of the WAL at `path` to `body`, in order, holding in memory only the
    /// frames of the transaction being read (a missing file or one that is not a WAL has none).
    @discardableResult
    public static func scan(path: String, committed body: (Frame) throws -> Void = { _ in }) throws -> Summary {
        var summary = Summary()
        var pending: [Frame] = []
        let header = try WALFrames.read(path: path) { frame, page in
            guard frame.chainHolds else { return false }
            pending.append(Frame(index: frame.index, pageNumber: frame.header.pageNumber, page: Array(page)))
            if frame.header.commitSize != 0 {
                for committed in pending { try body(committed) }
                pending.removeAll()
                summary.committedDatabasePages = Int(frame.header.commitSize)
            }
            return true
        }
        summary.pageSize = header?.pageSize ?? 0
        return summary
    }

    /// Why opening `databasePath` through SQLite would be unsafe, or nil. A WAL whose last commit says the
    /// database has more pages than the file and the WAL together hold is damaged, and SQLite 3.15 would
    /// extend the main file to that size (10^9 pages: a terabyte) when it checkpoints the WAL on close.
    public static func impossibleClaim(databasePath: String) throws -> String? {
        let summary = try scan(path: databasePath + "-wal")
        guard summary.committedDatabasePages > 0 else { return nil }
        let possible = mostPages(databasePath: databasePath, pageSize: summary.pageSize)
        guard summary.committedDatabasePages > possible else { return nil }
        return
            "the WAL's last commit says the database has \(summary.committedDatabasePages) pages; the file and its WAL hold at most \(possible)"
    }

    /// The most pages a database can have whose file and WAL together hold what they hold now: a page
    /// count claimed beyond it is damage.
    public static func mostPages(databasePath: String, pageSize: Int) -> Int {
        let bytes = [databasePath, databasePath + "-wal"].reduce(0) {
            $0 + ((try? FileManager.default.attributesOfItem(atPath: $1)[.size] as? Int) ?? 0)
        }
        return bytes / pageSize + 1
    }
}
