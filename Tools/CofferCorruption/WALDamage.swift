// WALDamage — damage to a `-wal` file: one committed frame flipped in the middle of the log, or the log cut
// short. Kept apart from DamageKind (which damages the main file, planned from its page roles): a WAL is
// planned from its own frame sequence, read from the pristine log.
//
// Choices, and why:
// - `wal-flip-frame` picks a committed frame from the middle half of the log, never the last one, so a
//   committed frame follows it: every other frame is still provably committed, and only the flipped frame
//   is lost. The byte is in the frame's page image (not its 24-byte header), avoiding an encrypted page's
//   salt (page 1, bytes 0–15) and its 12 unauthenticated trailing bytes, so the page fails its HMAC and the
//   WAL checksum chain breaks there.
// - `wal-truncate` cuts in the second half of the log, at a frame boundary or inside a frame. Frames after
//   the last commit frame that survives whole belong to a transaction whose commit is gone: they are lost
//   too.

import CofferFormat
import CofferTestSupport
import Foundation

/// A kind of damage to a `-wal` file.
public enum WALDamageKind: String, Sendable, Codable, CaseIterable {
    /// XOR one byte of one committed frame's page image in the middle of the log.
    case flipFrame = "wal-flip-frame"
    /// Cut the log in its second half, at a frame boundary or inside a frame (seed decides).
    case truncate = "wal-truncate"
}

/// One frame of a WAL, as the pristine log holds it.
public struct WALFrame: Sendable, Equatable {
    /// The frame's position in the log (0-based).
    public var index: Int
    /// The page the frame holds.
    public var page: UInt32
    /// Whether it ends a transaction.
    public var isCommit: Bool
}

/// What a WAL injection did.
public struct WALDamageReport: Sendable, Codable, Equatable {
    /// The kind of damage.
    public var kind: WALDamageKind
    /// The seed it was drawn from.
    public var seed: UInt64
    /// Committed frames in the pristine log.
    public var frameCount: Int
    /// Committed frames whose page can no longer be read as committed: flipped, cut off, or of a
    /// transaction whose commit frame was cut off.
    public var lostFrames: [Int]
    /// The new log size, when truncated.
    public var truncatedTo: UInt64?
}

/// Reads a pristine WAL's frames and damages a copy of it.
///
/// ```swift
/// let report = try WALCorruptionInjector.inject(wal: "copy.db-wal", kind: .flipFrame, seed: 3, encrypted: true)
/// print(report.lostFrames)
/// ```
public enum WALCorruptionInjector {
    /// The committed frames of the WAL at `path` for pages of `pageSize`, in log order: frames whose salts and
    /// checksum chain hold, up to the last commit frame.
    public static func frames(wal path: String, pageSize: Int) throws(CorruptionError) -> [WALFrame] {
        guard let data = FileManager.default.contents(atPath: path) else { throw .io("cannot read \(path)") }
        let bytes = [UInt8](data)
        guard bytes.count >= 32 else { return [] }
        let header = ByteView(Array(bytes[0..<32]))
        // CofferFormat's header parser knows the magic and the checksum byte order.
        guard let format = WALHeader(Array(bytes[0..<32])) else { throw .io("\(path) is not a WAL") }
        let bigEndian = format.bigEndianChecksums
        var sums = WALChecksum.compute(bytes[0..<24], bigEndian: bigEndian, seed: (0, 0))
        var frames: [WALFrame] = []
        var committed = 0
        var offset = 32
        while offset + 24 + pageSize <= bytes.count {
            let frame = ByteView(Array(bytes[offset..<(offset + 24)]))
            guard let page = frame.u32(0), let commit = frame.u32(4), frame.u32(8) == header.u32(16),
                frame.u32(12) == header.u32(20)
            else { break }
            sums = WALChecksum.compute(bytes[offset..<(offset + 8)], bigEndian: bigEndian, seed: sums)
            sums = WALChecksum.compute(bytes[(offset + 24)..<(offset + 24 + pageSize)], bigEndian: bigEndian, seed: sums)
            guard (frame.u32(16), frame.u32(20)) == (sums.0, sums.1) else { break }
            frames.append(WALFrame(index: frames.count, page: page, isCommit: commit != 0))
            if commit != 0 { committed = frames.count }
            offset += 24 + pageSize
        }
        return Array(frames.prefix(committed))
    }

    /// Damages the WAL at `wal` (a copy: it is written in place) for pages of `pageSize`.
    public static func inject(
        wal: String, pageSize: Int, kind: WALDamageKind, seed: UInt64, encrypted: Bool
    ) throws(CorruptionError) -> WALDamageReport {
        let frames = try frames(wal: wal, pageSize: pageSize)
        guard frames.count >= 2 else {
            throw .noWALTarget(kind: kind, reason: "the WAL has fewer than two committed frames")
        }
        var random = SeededGenerator(seed: seed ^ kind.rawValue.hashValueStable)
        let frameSize = UInt64(24 + pageSize)
        func bodyOffset(_ index: Int) -> UInt64 { 32 + UInt64(index) * frameSize + 24 }
        var plan = DamagePlan()
        var report = WALDamageReport(kind: kind, seed: seed, frameCount: frames.count, lostFrames: [])
        switch kind {
        case .flipFrame:
            let low = frames.count / 4
            let high = max(low, min(frames.count - 2, frames.count * 3 / 4))
            let frame = frames[random.int(in: low...high)]
            let first = encrypted && frame.page == 1 ? 16 : 0
            let last = pageSize - (encrypted ? 13 : 1)
            plan.edits.append(
                .xor(offset: bodyOffset(frame.index) + UInt64(random.int(in: first...last)), mask: random.nonZeroByte()))
            report.lostFrames = [frame.index]
        case .truncate:
            let cut = random.int(in: (frames.count / 2)...(frames.count - 1))
            let inside = random.int(in: 0...1) == 1
            let size = 32 + UInt64(cut) * frameSize + (inside ? UInt64(random.int(in: 1...(Int(frameSize) - 1))) : 0)
            plan.edits.append(.truncate(size: size))
            report.truncatedTo = size
            let lastCommit = frames.prefix(cut).last(where: \.isCommit)?.index ?? -1
            report.lostFrames = Array((lastCommit + 1)..<frames.count)
        }
        try CorruptionInjector.apply(plan, to: wal)
        return report
    }
}
