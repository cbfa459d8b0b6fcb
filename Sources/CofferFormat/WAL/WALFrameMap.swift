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
public struct WALFrameMap: Sendable {
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
        var frames: [Frame] = []
        var sqliteCount = 0
        var lastCommit = 0
        guard
            let header = WALFrames.read(
                path: path, pageSize: expected,
                { frame, _ in
                    let entry = Frame(
                        index: frame.index, bodyOffset: frame.bodyOffset, pageNumber: frame.header.pageNumber,
                        commitSize: frame.header.commitSize, intact: frame.intact)
                    frames.append(entry)
                    if frame.intact && entry.commitSize != 0 {
                        lastCommit = frame.index
                        if frame.chainHolds { sqliteCount = frame.index }
                    }
                    return true
                })
        else { return nil }
        self.pageSize = header.pageSize
        committed = Array(frames.prefix(lastCommit))
        committedBySQLite = sqliteCount
        uncommitted = frames.dropFirst(lastCommit).filter(\.intact).count
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
