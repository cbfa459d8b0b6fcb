import Foundation

/// One statement as the statement trace reports it (``Monitoring/statements``).
///
/// ```swift
/// configuration.monitoring.statements = .slow(threshold: 0.050)
/// configuration.monitoring.onStatement = { trace in
///     print("\(trace.duration)s \(trace.pagesRead) pages read: \(trace.sql)")
/// }
/// ```
///
/// Page counts come from SQLite's per-connection counters (`sqlite3_db_status`) taken when the statement
/// ends: they are exact for statements that run one after another, and shared between statements whose
/// cursors are open at the same time.
public struct StatementTrace: Sendable {
    /// The SQL as prepared, with literals and bound values shown as `?` unless
    /// ``Monitoring/includesValues`` is set; never a key or passphrase.
    public let sql: String
    /// Wall-clock time from the first step to the reset, in seconds.
    public let duration: TimeInterval
    /// Rows the statement returned.
    public let rowsRead: Int
    /// Rows the statement inserted, updated or deleted, those of its triggers included.
    public let rowsWritten: Int
    /// Pages SQLite's page cache did not hold: read from the file (and decrypted, unless the
    /// ``DecryptedPageCache`` held them).
    public let pagesRead: Int
    /// Pages found in SQLite's page cache.
    public let pageCacheHits: Int
    /// Rows stepped through by full table scans (`SQLITE_STMTSTATUS_FULLSCAN_STEP`): non-zero means a
    /// missing index.
    public let fullScanSteps: Int
    /// Whether the statement ran on the writer (false: a reader).
    public let onWriter: Bool
}
