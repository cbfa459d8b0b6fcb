// WALIndex — which committed WAL frame holds the newest version of each page.
//
// WAL file format (all big-endian):
//   header (32 bytes): 0 magic 0x377f0682 or 0x377f0683 · 4 version 3007000 · 8 page size ·
//     12 checkpoint sequence · 16 salt-1 · 20 salt-2 · 24 checksum-1 · 28 checksum-2 (over bytes 0–23)
//   frames: 24-byte header — 0 page number · 4 database size in pages after commit (non-zero only on a
//     commit frame) · 8 salt-1 · 12 salt-2 · 16 checksum-1 · 20 checksum-2 — then one page, exactly as
//     it would be in the main file (for SQLCipher: encrypted, authenticated by its page number).
// Checksum: running pair (s0, s1) over 32-bit words (big-endian words if the magic's low bit is 1, else
//   little-endian), two at a time: s0 += x[i] + s1; s1 += x[i+1] + s0 (wrapping). The header's pair is
//   over its first 24 bytes; each frame continues from the previous pair over its first 8 header bytes
//   then the page. For SQLCipher the checksum is over the encrypted bytes, so it is checked without a key.
// A frame counts only if its salts equal the header's and its checksum matches; reading stops at the first
// frame that fails. Only frames up to the last valid commit frame are used (later frames belong to a
// transaction that never committed). The newest committed frame of a page wins.
// Rejections: bad magic, page size different from the main file's, bad header checksum → the WAL is
// ignored as a whole (never worse than having no WAL).

import Foundation

/// The committed contents of a WAL file, indexed by page number. Holds offsets, never page bytes.
public struct WALIndex: Sendable {
    /// For each page number, the byte offsets of its committed frame bodies, newest first.
    public let frames: [UInt32: [UInt64]]
    /// The database size in pages after the last commit.
    public let databaseSize: UInt32
    /// How many frames are committed.
    public let committedFrames: Int
    /// How many valid frames follow the last commit (an unfinished transaction; ignored).
    public let uncommittedFrames: Int

    /// Reads the WAL at `path` for a database of `pageSize`. Returns nil if the WAL is absent, empty or
    /// invalid as a whole. Streams the file one frame at a time.
    public init?(path: String, pageSize: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let fd = handle.fileDescriptor
        guard let header = DatabaseFile.read(fd, offset: 0, count: 32) else { return nil }
        let view = ByteView(header)
        guard let magic = view.u32(0), magic == 0x377f_0682 || magic == 0x377f_0683,
            let size = view.u32(8), Int(size) == pageSize || (size == 1 && pageSize == 65536),
            let salt1 = view.u32(16), let salt2 = view.u32(20), let check1 = view.u32(24), let check2 = view.u32(28)
        else { return nil }
        let bigEndian = magic & 1 == 1
        var sums = WALIndex.checksum(header[0..<24], bigEndian: bigEndian, seed: (0, 0))
        guard sums == (check1, check2) else { return nil }

        var committed: [UInt32: [UInt64]] = [:]
        var pending: [(UInt32, UInt64)] = []
        var databaseSize: UInt32 = 0
        var committedCount = 0
        var offset: UInt64 = 32
        let frameSize = UInt64(24 + pageSize)
        while let frame = DatabaseFile.read(fd, offset: offset, count: Int(frameSize)) {
            let frameView = ByteView(frame)
            guard let pageNumber = frameView.u32(0), let commitSize = frameView.u32(4),
                frameView.u32(8) == salt1, frameView.u32(12) == salt2, let sum1 = frameView.u32(16),
                let sum2 = frameView.u32(20), pageNumber >= 1
            else { break }
            var next = WALIndex.checksum(frame[0..<8], bigEndian: bigEndian, seed: sums)
            next = WALIndex.checksum(frame[24...], bigEndian: bigEndian, seed: next)
            guard next == (sum1, sum2) else { break }
            sums = next
            pending.append((pageNumber, offset + 24))
            if commitSize != 0 {
                for (page, bodyOffset) in pending { committed[page, default: []].insert(bodyOffset, at: 0) }
                committedCount += pending.count
                pending.removeAll()
                databaseSize = commitSize
            }
            offset += frameSize
        }
        guard committedCount > 0 else { return nil }
        frames = committed
        self.databaseSize = databaseSize
        committedFrames = committedCount
        uncommittedFrames = pending.count
    }

    /// The WAL checksum of `bytes` (length a multiple of 8) continuing from `seed`.
    public static func checksum<Bytes: Collection>(_ bytes: Bytes, bigEndian: Bool, seed: (UInt32, UInt32))
        -> (UInt32, UInt32) where Bytes.Element == UInt8, Bytes.Index == Int
    {
        var s0 = seed.0
        var s1 = seed.1
        var index = bytes.startIndex
        func word(_ at: Int) -> UInt32 {
            let b0 = UInt32(bytes[at])
            let b1 = UInt32(bytes[at + 1])
            let b2 = UInt32(bytes[at + 2])
            let b3 = UInt32(bytes[at + 3])
            return bigEndian ? (b0 << 24 | b1 << 16 | b2 << 8 | b3) : (b3 << 24 | b2 << 16 | b1 << 8 | b0)
        }
        while index + 8 <= bytes.endIndex {
            s0 = s0 &+ word(index) &+ s1
            s1 = s1 &+ word(index + 4) &+ s0
            index += 8
        }
        return (s0, s1)
    }
}
