import Foundation

/// Every frame of a WAL file judged on its own, without the key — what SQLite's recovery cannot do.
///
/// SQLite accepts frames while its cumulative checksum chain holds and drops everything from the first
/// frame that breaks it, committed transactions after it included. But each frame header stores the
/// running checksum pair, so a frame can be checked alone: its salts are the WAL header's and the
/// checksum of its first 8 header bytes and its page, seeded with the pair stored in the previous frame's
/// header (the WAL header's for frame 1), equals the pair it stores. A damaged frame fails; the frame after
/// it still checks against the damaged frame's stored pair (intact unless the damage hit those 8 bytes).
/// Frames of an earlier WAL generation never pass: their salts differ (salt-1 grows at each restart,
/// salt-2 is random).
///
/// The committed part is every frame up to the last intact commit frame (non-zero database size). Frames
/// after it belong to a transaction that never committed, as in SQLite.
@_spi(CofferInternal) public struct WALFrameMap: Sendable {
    /// One frame slot of the file.
    public struct Frame: Sendable, Equatable {
        /// 1-based frame number.
        public let index: Int
        /// Byte offset of the frame's page (after its 24-byte header) in the WAL file.
        public let bodyOffset: UInt64
        /// The page number the header claims (unreliable when `intact` is false).
        public let pageNumber: UInt32
        /// Database size in pages after this frame, non-zero on a commit frame (unreliable when not intact).
        public let commitSize: UInt32
        /// Whether salts and the frame's own checksum hold.
        public let intact: Bool
    }

    /// The WAL's page size.
    public let pageSize: Int
    /// Every frame up to the last intact commit frame, in file order.
    public let committed: [Frame]
    /// How many leading frames SQLite's own recovery accepts as committed (its chain holds to there).
    public let committedBySQLite: Int
    /// Intact frames after the last intact commit frame (an unfinished transaction).
    public let uncommitted: Int

    /// Damaged frames inside the committed part: each loses a page of a committed transaction.
    public var damaged: [Frame] { committed.filter { !$0.intact } }

    /// The database size in pages after the last intact commit (0 when nothing is committed).
    public var databaseSize: UInt32 { committed.last?.commitSize ?? 0 }

    /// Reads the WAL at `path`; nil when it is absent, not a WAL, or its header fails its checksum
    /// (`pageSize`, when given, must also match the WAL's).
    public init?(path: String, pageSize expected: Int? = nil) {
        guard let file = try? PageFile(path: path, writable: false),
            let header = try? file.read(count: 32, at: 0), header.count == 32
        else { return nil }
        let magic = ChangedPageTracker.bigEndian(header, 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else { return nil }
        let bigEndian = magic & 1 == 1
        let raw = Int(ChangedPageTracker.bigEndian(header, 8))
        let pageSize = raw == 1 ? 65536 : raw
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0, expected == nil || expected == pageSize,
            WALScan.checksum(header[0..<24], seed: (0, 0), bigEndian: bigEndian)
                == (ChangedPageTracker.bigEndian(header, 24), ChangedPageTracker.bigEndian(header, 28))
        else { return nil }
        let salts = (ChangedPageTracker.bigEndian(header, 16), ChangedPageTracker.bigEndian(header, 20))
        var stored = (ChangedPageTracker.bigEndian(header, 24), ChangedPageTracker.bigEndian(header, 28))
        var frames: [Frame] = []
        var chainHolds = true
        var sqliteCount = 0
        var lastCommit = 0
        var index = 1
        while let frame = try? file.read(count: pageSize + 24, at: 32 + (index - 1) * (pageSize + 24)),
            frame.count == pageSize + 24
        {
            var sums = WALScan.checksum(frame[0..<8], seed: stored, bigEndian: bigEndian)
            sums = WALScan.checksum(frame[24...], seed: sums, bigEndian: bigEndian)
            let own = (ChangedPageTracker.bigEndian(frame, 16), ChangedPageTracker.bigEndian(frame, 20))
            let intact =
                ChangedPageTracker.bigEndian(frame, 8) == salts.0 && ChangedPageTracker.bigEndian(frame, 12) == salts.1
                && sums == own
            let entry = Frame(
                index: index, bodyOffset: UInt64(32 + (index - 1) * (pageSize + 24) + 24),
                pageNumber: ChangedPageTracker.bigEndian(frame, 0), commitSize: ChangedPageTracker.bigEndian(frame, 4),
                intact: intact)
            frames.append(entry)
            chainHolds = chainHolds && intact
            if intact && entry.commitSize != 0 {
                lastCommit = index
                if chainHolds { sqliteCount = index }
            }
            stored = own
            index += 1
        }
        self.pageSize = pageSize
        committed = Array(frames.prefix(lastCommit))
        committedBySQLite = sqliteCount
        uncommitted = frames.dropFirst(lastCommit).filter(\.intact).count
    }

    /// The WAL checksum of `bytes` (length a multiple of 8) continuing from `seed`.
    public static func checksum(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
        WALScan.checksum(bytes, seed: seed, bigEndian: bigEndian)
    }

    /// Why the WAL at `path` loses committed transactions, or nil: its checksum chain breaks before its last
    /// intact commit frame, so SQLite (and anything reading through it) drops the commits after the break.
    public static func lostCommits(path: String) -> String? {
        guard let map = WALFrameMap(path: path), let first = map.damaged.first else { return nil }
        let frames = map.damaged.map { String($0.index) }.joined(separator: ", ")
        return
            "the WAL's checksum chain breaks at frame \(first.index), before its last commit (frame \(map.committed.count)): damaged frame(s) \(frames); SQLite drops every commit after frame \(map.committedBySQLite)"
    }
}
