import CSQLCipher
import CofferFormat

/// Runs `sqlite3_wal_checkpoint_v2` and works out how many pages this checkpoint copied into the main file,
/// for `coffer_checkpoint_pages`. SQLite reports only the WAL's cumulative backfill (and zero once a
/// TRUNCATE reset the WAL), so the WAL index's own counts (`-shm`, ``WALSharedIndex``) are read just before.
enum CheckpointCount {
    /// The checkpoint's result code and, when `metrics` is set, the pages it copied (recorded there).
    static func run(_ connection: Connection, mode: Int32, metrics: DatabaseMetrics?) -> Int32 {
        guard let metrics else { return sqlite3_wal_checkpoint_v2(connection.handle, nil, mode, nil, nil) }
        let before = WALSharedIndex(databasePath: connection.path)
        var backfilled: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(connection.handle, nil, mode, nil, &backfilled)
        guard code == SQLITE_OK else { return code }
        var copied = Int(backfilled)
        if let before {
            let end = mode == SQLITE_CHECKPOINT_TRUNCATE ? Int(before.maxFrame) : Int(backfilled)
            copied = max(0, end - Int(before.backfilledFrames))
        }
        metrics.checkpoints.increment()
        if copied > 0 { metrics.checkpointPages.increment(by: copied) }
        return code
    }

}
