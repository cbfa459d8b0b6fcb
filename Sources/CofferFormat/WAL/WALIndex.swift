// WALIndex — which committed WAL frame holds the newest version of each page, and which pages lost theirs.
//
// The file format and its checksum: WALFormat.swift.
//
// SQLite stops at the first frame that breaks the chain and loses every commit after it. Here each frame is
// judged on its own (WALFrameMap: salts equal the header's, and its checksum seeded with the pair
// stored in the previous frame's header matches its own), so one damaged frame loses one page version,
// not the rest of the log. The committed part is every frame up to the last intact commit frame; frames
// after it belong to a transaction that never committed and are ignored.
//
// The rule per page P, which never returns a stale version:
//   P's version is its newest frame in the committed part. If that frame is intact, it is used (and its
//   HMAC is still checked when read: WALOverlay). If it is damaged — checksum or salts broken, its page
//   number taken from its header — P is *lost*: a commit after the older versions changed P, so neither an
//   older frame nor the main file's copy may stand in for it. Likewise a frame that is intact but fails
//   its HMAC makes P lost (WALOverlay). Pages with no committed frame come from the main file.
//   Limit: a damaged frame whose page-number field itself is damaged names the wrong page; on an encrypted
//   file the page it really held then reads its older version. A flip lands in those 4 header bytes with
//   probability 4 / (page size + 24).
// Rejections: bad magic, page size different from the main file's, bad header checksum → the WAL is
// ignored as a whole (never worse than having no WAL).

import Foundation

/// The committed contents of a WAL file, indexed by page number. Holds offsets, never page bytes.
public struct WALIndex: Sendable {
    /// For each page number, the byte offset of the body of its newest committed intact frame (a
    /// one-element list: older versions are never used; see the rule above).
    public let frames: [UInt32: [UInt64]]
    /// Pages whose newest committed frame is damaged: their committed content is lost (never read from an
    /// older frame or the main file).
    public let lost: Set<UInt32>
    /// The database size in pages after the last commit.
    public let databaseSize: UInt32
    /// When page 1 is lost: the body offset of its newest intact committed frame before the damaged one
    /// (nil when there is none: its older version is then the main file's). Read only for the schema.
    public let olderPageOne: UInt64?
    /// How many frames are committed (damaged ones included).
    public let committedFrames: Int
    /// How many committed frames are damaged.
    public let damagedFrames: Int
    /// How many of the committed frames SQLite's own recovery would keep (it stops at the first break).
    public let framesSQLiteKeeps: Int
    /// How many valid frames follow the last commit (an unfinished transaction; ignored).
    public let uncommittedFrames: Int

    /// Reads the WAL at `path` for a database of `pageSize`. Returns nil if the WAL is absent, empty or
    /// invalid as a whole. Streams the file one frame at a time.
    public init?(path: String, pageSize: Int) {
        guard let map = WALFrameMap(path: path, pageSize: pageSize), !map.committed.isEmpty else { return nil }
        var newest: [UInt32: (index: Int, offset: UInt64)] = [:]
        var damagedNewest: [UInt32: Int] = [:]
        var pageOne: [(index: Int, offset: UInt64)] = []
        for frame in map.committed where frame.pageNumber >= 1 {
            if frame.intact {
                newest[frame.pageNumber] = (frame.index, frame.bodyOffset)
                if frame.pageNumber == 1 { pageOne.append((frame.index, frame.bodyOffset)) }
            } else {
                damagedNewest[frame.pageNumber] = frame.index
            }
        }
        let pageOneLostAt = damagedNewest[1].flatMap { $0 > (newest[1]?.index ?? 0) ? $0 : nil }
        olderPageOne = pageOneLostAt.flatMap { lostAt in pageOne.last { $0.index < lostAt }?.offset }
        var lost = Set<UInt32>()
        for (page, damagedIndex) in damagedNewest where damagedIndex > (newest[page]?.index ?? 0) {
            lost.insert(page)
            newest[page] = nil
        }
        frames = newest.mapValues { [$0.offset] }
        self.lost = lost
        databaseSize = map.databaseSize
        committedFrames = map.committed.count
        damagedFrames = map.committed.count { !$0.intact }
        framesSQLiteKeeps = map.committedBySQLite
        uncommittedFrames = map.uncommitted
    }
}
