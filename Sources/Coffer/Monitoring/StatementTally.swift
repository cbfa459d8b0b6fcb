import CSQLCipher

/// What one connection's statements did since the last flush, in plain integers, handed to the database's
/// metrics once per transaction: a statement pays a few additions, and the metrics API, SQLite's page
/// counters and the decryption counts are read when a transaction ends (a statement leaves the connection
/// in autocommit: `COMMIT`, `ROLLBACK`, or a statement outside any transaction), and when the monitor goes
/// with its connection. Used on the connection's thread only.
final class StatementTally {
    /// One statement in `sampleInterval` has its time recorded in `coffer_statement_duration`.
    static let sampleInterval = 16

    private let metrics: DatabaseMetrics
    private let decryptions: DecryptionTally?
    private let handle: OpaquePointer
    private let rows: RowCounter
    /// Statements since the last flush, and since the connection's monitor started (for sampling).
    private var statements = 0
    private var sequence = 0
    /// Pages the statement trace already took from SQLite's counters (it reads them per statement).
    private var pagesRead = 0
    private var cacheHits = 0
    /// The running totals the last flush saw.
    private var rowsSeen: Int
    private var totalChanges: Int32
    private var flushesSinceDecryptions = 0

    init(connection: Connection, metrics: DatabaseMetrics, decryptions: DecryptionTally?) {
        self.metrics = metrics
        self.decryptions = decryptions
        self.handle = connection.handle
        self.rows = connection.rowCounter
        self.rowsSeen = connection.rowCounter.count
        self.totalChanges = sqlite3_total_changes(connection.handle)
        // Start the page counters from zero.
        _ = Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_MISS)
        _ = Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_HIT)
    }

    deinit {
        // The connection is closed: only the counts kept here are left to report.
        if statements > 0 { metrics.statements.increment(by: statements) }
        let rowsRead = rows.count &- rowsSeen
        if rowsRead > 0 { metrics.rowsRead.increment(by: rowsRead) }
    }

    /// A statement ended after `nanoseconds`; every `sampleInterval`-th one (the first included) is timed.
    func statementEnded(nanoseconds: Int64) {
        statements &+= 1
        if sequence % Self.sampleInterval == 0 { metrics.statementDuration.recordNanoseconds(nanoseconds) }
        sequence &+= 1
    }

    /// Adds pages the statement trace read from SQLite's counters (which it resets) for one statement.
    func add(pagesRead: Int, cacheHits: Int) {
        self.pagesRead &+= pagesRead
        self.cacheHits &+= cacheHits
    }

    /// Hands everything counted since the last flush to the metrics.
    func flush() {
        let changes = sqlite3_total_changes(handle)
        let rowsWritten = Int(changes &- totalChanges)
        totalChanges = changes
        let rowCount = rows.count
        let rowsRead = rowCount &- rowsSeen
        rowsSeen = rowCount
        let pagesRead = self.pagesRead &+ Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_MISS)
        let cacheHits = self.cacheHits &+ Self.pageCount(handle, SQLITE_DBSTATUS_CACHE_HIT)
        if statements > 0 { metrics.statements.increment(by: statements) }
        if rowsRead > 0 { metrics.rowsRead.increment(by: rowsRead) }
        if rowsWritten > 0 { metrics.rowsWritten.increment(by: rowsWritten) }
        if pagesRead > 0 { metrics.pagesRead.increment(by: pagesRead) }
        if cacheHits > 0 { metrics.pageCacheHits.increment(by: cacheHits) }
        statements = 0
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
