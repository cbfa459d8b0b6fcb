import CSQLCipher
import Foundation

/// Runs `sqlite3_wal_checkpoint_v2` and works out how many pages this checkpoint copied into the main file,
/// for `coffer_checkpoint_pages`. SQLite reports only the WAL's cumulative backfill (and zero once a
/// TRUNCATE reset the WAL), so the WAL index's own counts (`-shm`: the header's `mxFrame` and the
/// checkpoint info's `nBackfill`, native byte order) are read just before.
enum CheckpointCount {
    /// The checkpoint's result code and, when `metrics` is set, the pages it copied (recorded there).
    static func run(_ connection: Connection, mode: Int32, metrics: DatabaseMetrics?) -> Int32 {
        guard let metrics else { return sqlite3_wal_checkpoint_v2(connection.handle, nil, mode, nil, nil) }
        let before = walIndexCounts(databasePath: connection.path)
        var backfilled: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(connection.handle, nil, mode, nil, &backfilled)
        guard code == SQLITE_OK else { return code }
        var copied = Int(backfilled)
        if let before {
            let end = mode == SQLITE_CHECKPOINT_TRUNCATE ? Int(before.frames) : Int(backfilled)
            copied = max(0, end - Int(before.backfilled))
        }
        metrics.checkpoints.increment()
        if copied > 0 { metrics.checkpointPages.increment(by: copied) }
        return code
    }

    /// The WAL's frames and those already copied, from the WAL index; nil when it cannot be read.
    private static func walIndexCounts(databasePath: String) -> (frames: UInt32, backfilled: UInt32)? {
        guard let handle = FileHandle(forReadingAtPath: databasePath + "-shm") else { return nil }
        defer { try? handle.close() }
        guard let bytes = try? handle.read(upToCount: 100), bytes.count >= 100 else { return nil }
        func word(at offset: Int) -> UInt32 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        return (word(at: 16), word(at: 96))
    }
}
