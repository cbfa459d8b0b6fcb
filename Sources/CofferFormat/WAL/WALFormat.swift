// WALFormat — the WAL file's plaintext structure: its 32-byte header, the 24-byte frame headers and the
// checksum that chains them. Every WAL reader of the package (WALFrameMap, WALScan, WALIndex, Coffer's
// changed-page tracker, the corruption injector) parses through these.
//
// All fields big-endian:
//   header (32 bytes): 0 magic 0x377f0682 or 0x377f0683 · 4 version 3007000 · 8 page size ·
//     12 checkpoint sequence · 16 salt-1 · 20 salt-2 · 24 checksum-1 · 28 checksum-2 (over bytes 0–23)
//   frame header (24 bytes): 0 page number · 4 database size in pages after commit (non-zero only on a
//     commit frame) · 8 salt-1 · 12 salt-2 · 16 checksum-1 · 20 checksum-2 — then one page, exactly as in the
//     main file (for SQLCipher: encrypted, authenticated by its page number).
// Checksum: running pair (s0, s1) over 32-bit words (big-endian words if the magic's low bit is 1, else
//   little-endian), two at a time: s0 += x[i] + s1; s1 += x[i+1] + s0 (wrapping). The header's pair is over
//   its first 24 bytes; each frame continues from the previous pair over its first 8 header bytes, then the
//   page. For SQLCipher the checksum is over the encrypted bytes, so it is checked without a key.

import Foundation

/// The 32-byte header of a WAL file.
public struct WALHeader: Sendable {
    /// The header's size in bytes.
    public static let size = 32
    /// A frame header's size in bytes.
    public static let frameHeaderSize = 24

    /// The page size of every frame.
    public let pageSize: Int
    /// Whether checksum words are read big-endian (the magic's low bit).
    public let bigEndianChecksums: Bool
    /// Salt-1 and salt-2: every frame of this WAL generation repeats them.
    public let salts: (UInt32, UInt32)
    /// The checksum pair stored in the header (the seed of frame 1's).
    public let checksums: (UInt32, UInt32)
    /// Whether the stored pair is the checksum of the header's first 24 bytes.
    public let checksumHolds: Bool

    /// Parses the first 32 bytes of `bytes`; nil when they are too few, the magic is not a WAL's, or the page
    /// size is not a power of two in 512…65536 (1 is read as 65536).
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= Self.size else { return nil }
        let magic = ByteView.u32(bytes, at: 0)
        guard magic == 0x377f_0682 || magic == 0x377f_0683 else { return nil }
        let raw = Int(ByteView.u32(bytes, at: 8))
        let pageSize = raw == 1 ? 65536 : raw
        guard pageSize >= 512, pageSize <= 65536, pageSize & (pageSize - 1) == 0 else { return nil }
        self.pageSize = pageSize
        bigEndianChecksums = magic & 1 == 1
        salts = (ByteView.u32(bytes, at: 16), ByteView.u32(bytes, at: 20))
        checksums = (ByteView.u32(bytes, at: 24), ByteView.u32(bytes, at: 28))
        checksumHolds =
            WALChecksum.compute(bytes[0..<24], bigEndian: bigEndianChecksums, seed: (0, 0)) == checksums
    }

    /// The byte offset of frame `index` (1-based): its 24-byte header, then its page.
    public func frameOffset(_ index: Int) -> Int { Self.size + (index - 1) * (pageSize + Self.frameHeaderSize) }
}

/// The 24-byte header in front of every WAL frame's page.
public struct WALFrameHeader: Sendable {
    /// The page the frame holds.
    public let pageNumber: UInt32
    /// The database size in pages after this frame: non-zero only on a commit frame.
    public let commitSize: UInt32
    /// Salt-1 and salt-2 (the WAL header's on every frame of its generation).
    public let salts: (UInt32, UInt32)
    /// The running checksum pair stored after this frame.
    public let checksums: (UInt32, UInt32)

    /// Parses the first 24 bytes of `bytes` (the caller makes sure there are 24).
    public init(_ bytes: [UInt8]) {
        pageNumber = ByteView.u32(bytes, at: 0)
        commitSize = ByteView.u32(bytes, at: 4)
        salts = (ByteView.u32(bytes, at: 8), ByteView.u32(bytes, at: 12))
        checksums = (ByteView.u32(bytes, at: 16), ByteView.u32(bytes, at: 20))
    }

    /// Whether the frame carries `header`'s salts (a frame of the WAL's current generation).
    public func belongs(to header: WALHeader) -> Bool { salts == header.salts }
}

/// SQLite's WAL checksum.
public enum WALChecksum {
    /// The WAL checksum of `bytes` (length a multiple of 8) continuing from `seed`.
    public static func compute(_ bytes: ArraySlice<UInt8>, bigEndian: Bool, seed: (UInt32, UInt32)) -> (UInt32, UInt32) {
        var (s0, s1) = seed
        bytes.withUnsafeBytes { raw in
            for pair in 0..<(raw.count / 8) {
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

/// One frame as ``WALFrames/read(path:pageSize:_:)`` meets it.
public struct WALFrame: Sendable {
    /// 1-based frame number.
    public let index: Int
    /// The frame's header (its fields are unreliable when `intact` is false).
    public let header: WALFrameHeader
    /// Byte offset of the frame's page (after its 24-byte header) in the WAL file.
    public let bodyOffset: UInt64
    /// Whether its salts are the WAL header's and its own checksum (seeded with the pair stored in the
    /// previous frame's header) holds.
    public let intact: Bool
    /// Whether every frame up to this one is intact: SQLite's own recovery reads this far.
    public let chainHolds: Bool
}

/// Reads a WAL file frame by frame.
public enum WALFrames {
    /// Reads the WAL at `path` and passes each whole frame, with its page, to `body` in file order until
    /// `body` returns false or the file ends. Returns the header; nil when the file is absent, not a WAL,
    /// its header fails its checksum, or `pageSize` is given and differs from the WAL's. One frame is held
    /// in memory at a time.
    @discardableResult
    public static func read(
        path: String, pageSize expected: Int? = nil, _ body: (WALFrame, ArraySlice<UInt8>) throws -> Bool
    ) rethrows -> WALHeader? {
        guard let file = ReadOnlyFile(path: path) else { return nil }
        defer { withExtendedLifetime(file) {} }
        let descriptor = file.descriptor
        guard let bytes = DatabaseFile.read(descriptor, offset: 0, count: WALHeader.size),
            let header = WALHeader(bytes), header.checksumHolds, expected == nil || expected == header.pageSize
        else { return nil }
        var stored = header.checksums
        var chainHolds = true
        var index = 1
        let frameSize = header.pageSize + WALHeader.frameHeaderSize
        while let frame = DatabaseFile.read(descriptor, offset: UInt64(header.frameOffset(index)), count: frameSize) {
            let frameHeader = WALFrameHeader(frame)
            var sums = WALChecksum.compute(frame[0..<8], bigEndian: header.bigEndianChecksums, seed: stored)
            sums = WALChecksum.compute(frame[24...], bigEndian: header.bigEndianChecksums, seed: sums)
            let intact = frameHeader.belongs(to: header) && sums == frameHeader.checksums
            chainHolds = chainHolds && intact
            let entry = WALFrame(
                index: index, header: frameHeader, bodyOffset: UInt64(header.frameOffset(index) + 24), intact: intact,
                chainHolds: chainHolds)
            guard try body(entry, frame[24...]) else { break }
            stored = frameHeader.checksums
            index += 1
        }
        return header
    }
}
