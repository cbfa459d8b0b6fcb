import CofferEngine

// The background pass over existing rows: compresses rows written before a column was declared
// compressed, recompresses them with a column's new dictionary, and stores them plain again once the
// column says `.off`. Each batch is one write transaction on the writer, so the app's own writes run
// between batches; the last rowid done is committed with each batch, so a killed pass resumes there.

extension Database {
    /// The table holding each unfinished pass's last rowid, by table name.
    static let recompressionTable = "coffer_recompression"

    /// Brings the stored values of `Table`'s compressed columns in line with their declarations, in
    /// batches of `batchSize` rows (each its own write transaction, in rowid order). Returns the number
    /// of rows rewritten.
    ///
    /// Rows written before a column was declared `@Column(compressed:)` are compressed, rows compressed
    /// with another dictionary are recompressed with the one the declaration names now, and a column
    /// declared `.off` is stored plain. Readers see plain values throughout. A pass that was stopped
    /// (the process killed) resumes after the last batch it committed.
    ///
    /// ```swift
    /// try database.recompress(Message.self)
    /// ```
    @discardableResult
    public func recompress<Table: TableRecord>(_ type: Table.Type, batchSize: Int = 500) throws -> Int {
        try recompressBatches(RecompressionPlan(Table.self, batchSize: batchSize), control: nil)
    }

    /// ``recompress(_:batchSize:)`` as an `AsyncSequence` of progress events: rows done of the table's
    /// rows, then `.finished` with the number of rows rewritten. Stopping the iteration stops the pass
    /// after its current batch (a later pass resumes there).
    ///
    /// ```swift
    /// for try await event in database.recompressWithProgress(Message.self) {
    ///     if case .progress(let done, let total) = event { print("\(done)/\(total) rows") }
    /// }
    /// ```
    public func recompressWithProgress<Table: TableRecord>(
        _ type: Table.Type, batchSize: Int = 500
    ) -> AsyncThrowingStream<ProgressEvent<Int>, any Error> {
        // The SQL is worked out here, so that the background work captures strings, not the record type.
        recompressionProgress(Result { try RecompressionPlan(Table.self, batchSize: batchSize) })
    }

    /// The progress stream of `plan`'s pass (none when `plan` is nil: `.finished(0)`); an error building
    /// the plan is the stream's error.
    package func recompressionProgress(
        _ plan: Result<RecompressionPlan?, any Error>
    ) -> AsyncThrowingStream<ProgressEvent<Int>, any Error> {
        progressStream { control in try self.recompressBatches(plan.get(), control: control) }
    }

    /// Runs `plan`'s pass to the end (or until `control` is cancelled): what ``recompress(_:batchSize:)``
    /// and the stores' passes over their values run. No plan (nothing compressed) rewrites nothing.
    package func recompressBatches(_ plan: RecompressionPlan?, control: WorkControl?) throws -> Int {
        guard let plan else { return 0 }
        let state = Self.recompressionTable
        let table = plan.table
        let start = try write { db -> (last: Int64, done: Int, total: Int) in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(state)(table_name TEXT PRIMARY KEY, last_rowid INTEGER NOT NULL)")
            let last =
                try db.fetchValue(
                    Int64.self, sql: "SELECT last_rowid FROM \(state) WHERE table_name = ?", arguments: [plan.tableName])
                ?? Int64.min
            let done = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(table) WHERE rowid <= ?", arguments: [last]) ?? 0
            let total = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(table)") ?? 0
            return (last, done, total)
        }
        var last = start.last
        var done = start.done
        var rewritten = 0
        control?.progress(completed: done, total: start.total)
        while true {
            try control?.checkCancellation()
            let finished = try write { db -> Bool in
                guard let end = try db.fetchValue(Int64.self, sql: plan.nextBatchEnd, arguments: [last, plan.batchSize]) else {
                    try db.execute(sql: "DELETE FROM \(state) WHERE table_name = ?", arguments: [plan.tableName])
                    return true
                }
                try db.execute(sql: plan.update, arguments: [last, end])
                rewritten += db.changesCount
                done += db.changesCount
                try db.execute(
                    sql: "INSERT OR REPLACE INTO \(state)(table_name, last_rowid) VALUES (?, ?)",
                    arguments: [plan.tableName, end])
                last = end
                return false
            }
            if finished { break }
            control?.progress(completed: done, total: max(done, start.total))
        }
        return rewritten
    }
}

/// The statements of one table's pass, worked out from a record's declaration or given by a store.
package struct RecompressionPlan: Sendable {
    let tableName: String
    /// The table itself, `main."T"`: while a live migration's union view hides `T`, every statement of the
    /// pass reads and rewrites the rows already in the table (a view has no rowids of its rows); the rows
    /// still to move are stored as declared when they move.
    let table: String
    let batchSize: Int
    /// Rewrites the compressed columns of the rows with `last < rowid <= end`.
    let update: String
    /// The last rowid of the next batch after `last`, or NULL when none is left.
    let nextBatchEnd: String

    /// The pass over table `tableName` (a rowid table) that sets each column of `assignments` to its
    /// expression (which reads the row's current values).
    package init(tableName: String, assignments: [(column: String, value: String)], batchSize: Int) throws {
        let table = try "main." + SQLIdentifier.validated(tableName)
        let set = try assignments.map { try SQLIdentifier.validated($0.column) + " = " + $0.value }.joined(separator: ", ")
        self.tableName = tableName
        self.table = table
        self.batchSize = try Self.checked(batchSize)
        self.update = "UPDATE \(table) SET \(set) WHERE rowid > ? AND rowid <= ?"
        self.nextBatchEnd = "SELECT max(rowid) FROM (SELECT rowid FROM \(table) WHERE rowid > ? ORDER BY rowid LIMIT ?)"
    }

    /// The plan for `Table`, or nil when it has no compressed column.
    init?<Table: TableRecord>(_ type: Table.Type, batchSize: Int) throws {
        _ = try Self.checked(batchSize)
        let columns = Table.columnDefinitions.filter { $0.compression != nil }
        guard !columns.isEmpty else { return nil }
        guard !Table.withoutRowID else {
            throw CofferError(code: .apiMisuse, message: "recompress walks rowids: \(Table.tableName) is WITHOUT ROWID")
        }
        // A compressed column's selection is its plain value: `coffer_decompress(column)`.
        let assignments = try columns.map { column in
            (column.name, try Table.compressing(column.selection(), forColumn: column.name).render().sql)
        }
        try self.init(tableName: Table.tableName, assignments: assignments, batchSize: batchSize)
    }

    /// `batchSize`, or the error for a batch of no rows.
    private static func checked(_ batchSize: Int) throws -> Int {
        guard batchSize > 0 else { throw CofferError(code: .apiMisuse, message: "a batch holds at least one row") }
        return batchSize
    }
}
