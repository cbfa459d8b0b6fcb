import CofferEngine

/// A live migration's row of `coffer_live_migration`, in the target's own database: what survives a
/// crash. Every change to it commits in the transaction that moved the rows it counts, so after any
/// crash the watermark and the moved set say exactly which source rows are in the table.
struct LiveMigrationState {
    var sourcePath: String?
    var sourceTable: String
    /// Every source rowid at or below it has moved (rows above it moved only if in the moved set).
    var watermark: Int64
    var lastRowID: Int64
    var movedRows: Int
    var totalRows: Int
    /// Every row has moved (the watermark reached `lastRowID`).
    var isDone: Bool
    /// The source was dropped (same file) or let go of after `isDone`.
    var isCleaned: Bool

    var progress: LiveMigrationProgress {
        LiveMigrationProgress(movedRows: movedRows, totalRows: totalRows, isFinished: isDone && isCleaned)
    }

    static func createTables(_ db: Connection) throws {
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(LiveMigrationTable.stateTable) (target TEXT NOT NULL PRIMARY KEY, \
                source_path TEXT, source_table TEXT NOT NULL, watermark INTEGER NOT NULL, last_rowid INTEGER NOT NULL, \
                moved_rows INTEGER NOT NULL, total_rows INTEGER NOT NULL, done INTEGER NOT NULL DEFAULT 0, \
                cleaned INTEGER NOT NULL DEFAULT 0)
                """)
        try db.execute(
            sql: """
                CREATE TABLE IF NOT EXISTS \(LiveMigrationTable.movedTable) (target TEXT NOT NULL, \
                source_rowid INTEGER NOT NULL, PRIMARY KEY (target, source_rowid)) WITHOUT ROWID
                """)
    }

    static func read(_ target: String, _ db: Connection) throws -> LiveMigrationState? {
        guard
            let row = try db.fetchOne(
                sql: """
                    SELECT source_path, source_table, watermark, last_rowid, moved_rows, total_rows, done, cleaned \
                    FROM \(LiveMigrationTable.stateTable) WHERE target = ?
                    """, arguments: [target])
        else { return nil }
        return LiveMigrationState(
            sourcePath: row["source_path"], sourceTable: row["source_table"] ?? "", watermark: row["watermark"] ?? 0,
            lastRowID: row["last_rowid"] ?? 0, movedRows: row["moved_rows"] ?? 0, totalRows: row["total_rows"] ?? 0,
            isDone: row["done"] ?? false, isCleaned: row["cleaned"] ?? false)
    }

    func insert(_ target: String, _ db: Connection) throws {
        try db.execute(
            sql: """
                INSERT INTO \(LiveMigrationTable.stateTable) (target, source_path, source_table, watermark, last_rowid, \
                moved_rows, total_rows, done, cleaned) VALUES (?, ?, ?, ?, ?, 0, ?, ?, 0)
                """,
            arguments: [target, sourcePath, sourceTable, watermark, lastRowID, totalRows, isDone])
    }

    /// Rows one step of a batch moves: between steps the batch ends early when an app's call waits for
    /// the writer, so a write waits for one step, not for a whole batch.
    static let stepRows = 64

    /// Moves the next `batchSize` source rows (in rowid order; fewer when some moved early) into the
    /// table and advances the watermark past them, in the caller's transaction, in steps of
    /// ``stepRows`` rows; stops after the step in which `yields()` turns true. Returns the new state and
    /// the number of rows this batch moved.
    ///
    /// Each step is `INSERT OR FAIL`: SQLite then keeps no statement journal for it. With the default
    /// `ABORT`, every step after the first in a transaction first copied each page it changed (the
    /// insertion point's leaf and its parents) into the statement journal, and SQLCipher encrypts every
    /// page written there: in the `sqlcipher` shell, 3,000 such steps of 64 rows in one transaction took
    /// 0.87 s with `ABORT` and 0.48 s with `OR FAIL`. A failing step keeps the rows it inserted before
    /// the failure, so the caller must roll the transaction back when this throws
    /// (``Database/write(_:)`` does).
    static func moveBatch(
        _ union: LiveMigrationTable, batchSize: Int, _ db: Connection, yields: () -> Bool
    ) throws -> (Self, moved: Int) {
        guard var state = try read(union.target, db) else {
            throw CofferError(code: .apiMisuse, message: "the live migration of \(union.target) has no state row")
        }
        guard !state.isDone else { return (state, 0) }
        // Rows the app moved out of order sit above the watermark in the moved set; when there are none,
        // the steps skip the probe of the moved set for every row (nothing else writes it meanwhile:
        // this transaction holds the writer).
        let anyMovedAhead =
            try db.fetchValue(
                Bool.self,
                sql: "SELECT EXISTS (SELECT 1 FROM \(LiveMigrationTable.movedTable) WHERE target = ? AND source_rowid > ?)",
                arguments: [union.target, state.watermark]) ?? true
        let insert =
            "INSERT OR FAIL INTO \(union.writeTable) (\(union.columns)) "
            + (anyMovedAhead ? union.batchSelect : union.batchSelectNoneMovedAhead)
        var moved = 0
        var budget = batchSize
        repeat {
            let rows = min(stepRows, budget)
            let next =
                try db.fetchValue(
                    Int64.self,
                    sql: "SELECT rowid FROM \(union.sourceReference) WHERE rowid > ? ORDER BY rowid LIMIT 1 OFFSET ?",
                    arguments: [state.watermark, rows - 1]) ?? state.lastRowID
            let high = min(next, state.lastRowID)
            try db.execute(sql: insert, arguments: [state.watermark, high])
            moved += db.changesCount
            budget -= rows
            state.watermark = high
            state.isDone = high >= state.lastRowID
        } while !state.isDone && budget > 0 && !yields()
        try db.execute(
            sql: "DELETE FROM \(LiveMigrationTable.movedTable) WHERE target = ? AND source_rowid <= ?",
            arguments: [union.target, state.watermark])
        state.movedRows += moved
        try db.execute(
            sql:
                "UPDATE \(LiveMigrationTable.stateTable) SET watermark = ?, moved_rows = moved_rows + ?, done = ? WHERE target = ?",
            arguments: [state.watermark, moved, state.isDone, union.target])
        return (state, moved)
    }

    /// After the last batch: drops a same-file source and forgets the moved set, once. Runs in its own
    /// transaction, on a connection that no longer reads the table through its union.
    static func cleanUp(_ target: String, _ db: Connection) throws {
        try db.inTransaction(.immediate) {
            guard let state = try read(target, db), state.isDone, !state.isCleaned else { return }
            if state.sourcePath == nil {
                try db.execute(sql: "DROP TABLE IF EXISTS main." + (try SQLIdentifier.validated(state.sourceTable)))
            }
            try db.execute(sql: "DELETE FROM \(LiveMigrationTable.movedTable) WHERE target = ?", arguments: [target])
            try db.execute(sql: "UPDATE \(LiveMigrationTable.stateTable) SET cleaned = 1 WHERE target = ?", arguments: [target])
        }
    }
}

/// A source table's rowid range and the rows of it a migration takes.
struct SourceExtent {
    var first: Int64?
    var last: Int64?
    /// Rows with a rowid up to `last` that pass the filter.
    var total: Int

    /// The smallest and largest rowid of `reference` (`schema.table`): two index probes.
    static func bounds(of reference: String, _ db: Connection) throws -> (first: Int64?, last: Int64?) {
        let first = try db.fetchValue(Int64.self, sql: "SELECT min(rowid) FROM \(reference)")
        let last = try db.fetchValue(Int64.self, sql: "SELECT max(rowid) FROM \(reference)")
        return (first, last)
    }

    /// Counts the rows of `reference` in `bounds` that pass `filter`: a scan of the whole table.
    static func count(
        _ reference: String, filter: String?, bounds: (first: Int64?, last: Int64?), _ db: Connection
    ) throws -> SourceExtent {
        let condition = filter.map { " AND (\($0))" } ?? ""
        let total =
            try db.fetchValue(
                Int.self, sql: "SELECT count(*) FROM \(reference) AS s WHERE s.rowid <= ?" + condition,
                arguments: [bounds.last ?? 0]) ?? 0
        return SourceExtent(first: bounds.first, last: bounds.last, total: total)
    }
}
