import CSQLCipher

/// What one connection's statements did since the last flush, handed to the database's metrics once per
/// transaction. The connection's ``StepCounter`` counts statements and rows where Coffer steps them (a few
/// additions per statement, no SQLite trace callback) and tells the tally when a transaction ends (a
/// statement leaves the connection in autocommit: `COMMIT`, `ROLLBACK`, or a statement outside any
/// transaction); only then are the metrics API, SQLite's page counters and the decryption counts read.
/// Statements run through `executeScript` (schema scripts) or a raw `sqlite3_step` are not counted. Used on
/// the connection's thread only.
final class StatementTally: StepListener {
    private let metrics: DatabaseMetrics
    private let decryptions: DecryptionTally?
    private let handle: OpaquePointer
    /// Pages the statement trace already took from SQLite's counters (it reads them per statement).
    private var pagesRead = 0
    private var cacheHits = 0
    /// The running totals the last flush saw.
    private var statementsSeen: Int
    private var rowsSeen: Int
    private var totalChanges: Int32
    private var flushesSinceDecryptions = 0

    init(connection: Connection, metrics: DatabaseMetrics, decryptions: DecryptionTally?) {
        self.metrics = metrics
        self.decryptions = decryptions
        self.handle = connection.handle
        self.statementsSeen = connection.stepCounter.statements
        self.rowsSeen = connection.stepCounter.rows
        self.totalChanges = sqlite3_total_changes(connection.handle)
        // Start the page counters from zero.
        _ = Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_MISS)
        _ = Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_HIT)
        connection.stepCounter.listen(self)
    }

    func countingEnded(statements: Int, rows: Int) {
        // The connection is closed: only the counts kept here are left to report.
        if statements &- statementsSeen > 0 { metrics.statements.increment(by: statements &- statementsSeen) }
        if rows &- rowsSeen > 0 { metrics.rowsRead.increment(by: rows &- rowsSeen) }
    }

    func transactionEnded(statements: Int, rows: Int, sampledNanoseconds: [UInt64]) {
        for nanoseconds in sampledNanoseconds {
            metrics.statementDuration.recordNanoseconds(Int64(clamping: nanoseconds))
        }
        flush(statementTotal: statements, rowTotal: rows)
    }

    /// Adds pages the statement trace read from SQLite's counters (which it resets) for one statement.
    func add(pagesRead: Int, cacheHits: Int) {
        self.pagesRead &+= pagesRead
        self.cacheHits &+= cacheHits
    }

    /// Hands everything counted since the last flush to the metrics.
    private func flush(statementTotal: Int, rowTotal: Int) {
        let changes = sqlite3_total_changes(handle)
        let rowsWritten = Int(changes &- totalChanges)
        totalChanges = changes
        let statements = statementTotal &- statementsSeen
        statementsSeen = statementTotal
        let rowsRead = rowTotal &- rowsSeen
        rowsSeen = rowTotal
        let pagesRead = self.pagesRead &+ Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_MISS)
        let cacheHits = self.cacheHits &+ Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_HIT)
        if statements > 0 { metrics.statements.increment(by: statements) }
        if rowsRead > 0 { metrics.rowsRead.increment(by: rowsRead) }
        if rowsWritten > 0 { metrics.rowsWritten.increment(by: rowsWritten) }
        if pagesRead > 0 { metrics.pagesRead.increment(by: pagesRead) }
        if cacheHits > 0 { metrics.pageCacheHits.increment(by: cacheHits) }
        self.pagesRead = 0
        self.cacheHits = 0
        // The decryption counts are process-wide and take the cache's locks: read them when pages were read
        // from the file, and otherwise now and then.
        flushesSinceDecryptions += 1
        if pagesRead > 0 || flushesSinceDecryptions >= 16, let decryptions {
            flushesSinceDecryptions = 0
            metrics.recordDecryptions(decryptions)
        }
    }

    /// One of SQLite's per-connection page counters since the previous read (which resets it).
    static func pageCount(_ handle: OpaquePointer, _ counter: Int32) -> Int {
        var current: Int32 = 0
        var highwater: Int32 = 0
        sqlite3_db_status(handle, counter, &current, &highwater, 1)
        return Int(current)
    }
}
