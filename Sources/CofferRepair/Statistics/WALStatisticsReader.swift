// WALStatisticsReader — a WAL's size and checkpoint state, read from the `-wal` and `-shm` files only.
//
// The `-wal`: WALFrameMap judges every frame (committed part, damage, frames after the last commit).
// The `-shm` (SQLite's wal-index, native byte order): two copies of the 48-byte WalIndexHdr at 0 and 48 —
// isInit at byte 12, mxFrame (the last committed frame) at 16, the WAL header's salts (raw bytes 16–23 of
// the `-wal`) at 32 — then WalCkptInfo at 96, whose first field nBackfill counts the frames a checkpoint
// has copied into the main file. The `-shm` is trusted only when both header copies agree, isInit is set
// and its salts are the `-wal`'s (otherwise it describes an earlier WAL generation).

import Foundation

/// Reads ``WALStatistics`` beside a database.
enum WALStatisticsReader {
    static func read(walPath: String, pageSize: Int) -> WALStatistics {
        var stats = WALStatistics()
        guard let handle = FileHandle(forReadingAtPath: walPath) else { return stats }
        defer { try? handle.close() }
        stats.bytes = (try? handle.seekToEnd()) ?? 0
        let frameSize = UInt64(pageSize + WALHeader.frameHeaderSize)
        if stats.bytes > UInt64(WALHeader.size) { stats.frames = Int((stats.bytes - UInt64(WALHeader.size)) / frameSize) }
        if let map = WALFrameMap(path: walPath, pageSize: pageSize) {
            stats.committedFrames = map.committed.count
            stats.uncommittedFrames = map.uncommitted
            stats.damagedFrames = map.damaged.count
        }
        let walSalts = DatabaseFile.read(handle.fileDescriptor, offset: 16, count: 8)
        if let shm = FileHandle(forReadingAtPath: walPath.dropLast(4) + "-shm") {
            defer { try? shm.close() }
            if let bytes = DatabaseFile.read(shm.fileDescriptor, offset: 0, count: 100), bytes[0..<48] == bytes[48..<96],
                bytes[12] != 0, walSalts.map({ Array(bytes[32..<40]) == $0 }) ?? false
            {
                stats.shmMaxFrame = Int(native(bytes, 16))
                stats.backfilledFrames = Int(native(bytes, 96))
            }
        }
        if stats.committedFrames == 0 && (stats.shmMaxFrame ?? 0) == 0 {
            stats.checkpointState = "none"
        } else if let backfilled = stats.backfilledFrames, let last = stats.shmMaxFrame {
            stats.checkpointState = backfilled >= last ? "checkpointed" : "pending"
        } else {
            stats.checkpointState = "unknown"
        }
        return stats
    }

    /// A 32-bit integer in the machine's byte order (the wal-index is never moved between machines).
    private static func native(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
    }
}
