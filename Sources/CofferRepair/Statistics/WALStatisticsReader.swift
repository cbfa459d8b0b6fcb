// WALStatisticsReader — a WAL's size and checkpoint state, read from the `-wal` and `-shm` files only.
//
// The `-wal`: WALFrameMap judges every frame (committed part, damage, frames after the last commit).
// The `-shm` (SQLite's wal-index, read by WALSharedIndex) gives the last committed frame and the frames
// checkpoints copied; it is trusted only when its salts are the `-wal`'s (otherwise it describes an earlier
// WAL generation).

import Foundation

/// Reads ``WALStatistics`` beside a database.
enum WALStatisticsReader {
    static func read(walPath: String, pageSize: Int) -> WALStatistics {
        var stats = WALStatistics()
        guard let wal = ReadOnlyFile(path: walPath) else { return stats }
        stats.bytes = wal.size
        let frameSize = UInt64(pageSize + WALHeader.frameHeaderSize)
        if stats.bytes > UInt64(WALHeader.size) { stats.frames = Int((stats.bytes - UInt64(WALHeader.size)) / frameSize) }
        if let map = WALFrameMap(path: walPath, pageSize: pageSize) {
            stats.committedFrames = map.committed.count
            stats.uncommittedFrames = map.uncommitted
            stats.damagedFrames = map.damaged.count
        }
        if let shm = WALSharedIndex(path: walPath.dropLast(4) + "-shm"), shm.describes(walPath: walPath) {
            stats.shmMaxFrame = Int(shm.maxFrame)
            stats.backfilledFrames = Int(shm.backfilledFrames)
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
}
