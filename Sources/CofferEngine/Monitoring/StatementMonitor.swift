import CSQLCipher
import Foundation
import Logging

/// Watches one connection's statements for ``Monitoring``: counts them into the database's metrics
/// (through a ``StatementTally``, fed by the connection's ``StepCounter`` and flushed once per transaction)
/// and reports the traced ones. Only tracing listens to SQLite's own trace (`SQLITE_TRACE_PROFILE` when a
/// statement ends, `SQLITE_TRACE_ROW` for each row): with metrics alone no trace callback is installed.
/// Used on the connection's thread only.
final class StatementMonitor {
    private let tally: StatementTally?
    private let tracing: Monitoring.StatementTracing
    private let includesValues: Bool
    private let onStatement: (@Sendable (StatementTrace) -> Void)?
    private let logger: Logger
    private let onWriter: Bool
    private let handle: OpaquePointer
    /// Rows returned by the statement being stepped, and by others stepped between (open cursors).
    private var rowStatement: OpaquePointer?
    private var rowCount = 0
    private var interleavedRows: [OpaquePointer: Int] = [:]
    private var totalChanges: Int32
    /// Redacted SQL by statement, with the text it was made from.
    private var redactedSQL: [OpaquePointer: (original: String, redacted: String)] = [:]

    /// Starts watching `connection` and returns the monitor (kept alive by the connection's trace).
    @discardableResult
    static func install(
        on connection: Connection, monitoring: Monitoring, metrics: DatabaseMetrics?, decryptions: DecryptionTally?,
        onWriter: Bool
    ) -> StatementMonitor {
        let monitor = StatementMonitor(
            connection: connection, monitoring: monitoring, metrics: metrics, decryptions: decryptions,
            onWriter: onWriter)
        if monitoring.statements != .off {
            _ = connection.addTraceListener(mask: SQLITE_TRACE_PROFILE | SQLITE_TRACE_ROW) { monitor.observe($0) }
        }
        return monitor
    }

    private init(
        connection: Connection, monitoring: Monitoring, metrics: DatabaseMetrics?, decryptions: DecryptionTally?,
        onWriter: Bool
    ) {
        self.tally = metrics.map { StatementTally(connection: connection, metrics: $0, decryptions: decryptions) }
        self.tracing = monitoring.statements
        self.includesValues = monitoring.includesValues
        self.onStatement = monitoring.onStatement
        self.logger = connection.logger
        self.onWriter = onWriter
        self.handle = connection.handle
        self.totalChanges = sqlite3_total_changes(connection.handle)
        if tally == nil {
            // Start the page counters from zero (the tally does when there is one).
            _ = StatementTally.pageCount(handle, SQLITE_DBSTATUS_CACHE_MISS)
            _ = StatementTally.pageCount(handle, SQLITE_DBSTATUS_CACHE_HIT)
        }
    }

    private func observe(_ event: TraceEvent) {
        if event.kind == UInt32(SQLITE_TRACE_ROW) {
            countRow(of: event.statement)
            return
        }
        trace(event.statement, nanoseconds: event.elapsedNanoseconds)
    }

    private func countRow(of statement: OpaquePointer) {
        if statement == rowStatement {
            rowCount += 1
        } else if rowStatement == nil {
            rowStatement = statement
            rowCount = 1
        } else {
            interleavedRows[statement, default: 0] += 1
        }
    }

    /// Builds the statement's trace, and reports it when the tracing level asks for it.
    private func trace(_ statement: OpaquePointer, nanoseconds: Int64) {
        let rowsRead: Int
        if statement == rowStatement {
            rowsRead = rowCount
            rowStatement = nil
            rowCount = 0
        } else {
            rowsRead = interleavedRows.isEmpty ? 0 : interleavedRows.removeValue(forKey: statement) ?? 0
        }
        let changes = sqlite3_total_changes(handle)
        let rowsWritten = Int(changes &- totalChanges)
        totalChanges = changes
        // Read per statement, so that a slow statement is given its own pages (not those of the fast ones
        // before it); the tally adds them to the transaction's.
        let pagesRead = StatementTally.pageCount(handle, SQLITE_DBSTATUS_CACHE_MISS)
        let cacheHits = StatementTally.pageCount(handle, SQLITE_DBSTATUS_CACHE_HIT)
        tally?.add(pagesRead: pagesRead, cacheHits: cacheHits)
        let fullScanSteps = Int(sqlite3_stmt_status(statement, SQLITE_STMTSTATUS_FULLSCAN_STEP, 1))
        let seconds = Double(nanoseconds) / 1e9
        let isSlow: Bool
        switch tracing {
        case .off: return
        case .all: isSlow = false
        case .slow(let threshold):
            guard seconds >= threshold else { return }
            isSlow = true
        }
        let trace = StatementTrace(
            sql: sql(of: statement), duration: seconds, rowsRead: rowsRead, rowsWritten: rowsWritten,
            pagesRead: pagesRead, pageCacheHits: cacheHits, fullScanSteps: fullScanSteps,
            onWriter: onWriter)
        // The metadata is built only when the logger takes the level.
        logger.log(
            level: isSlow ? .info : .debug, isSlow ? "slow statement" : "statement",
            metadata: [
                "sql": "\(trace.sql)", "duration_ms": "\(String(format: "%.3f", seconds * 1000))",
                "rows_read": "\(rowsRead)", "rows_written": "\(rowsWritten)", "pages_read": "\(pagesRead)",
                "page_cache_hits": "\(cacheHits)",
                "full_scan_steps": "\(fullScanSteps)", "connection": "\(onWriter ? "writer" : "reader")",
            ])
        onStatement?(trace)
    }

    /// The statement's SQL as the trace may show it. Redacted text is kept per prepared statement (checked
    /// against the statement's own text, since SQLite may reuse a finalized statement's address).
    private func sql(of statement: OpaquePointer) -> String {
        if includesValues, let expanded = sqlite3_expanded_sql(statement) {
            defer { sqlite3_free(expanded) }
            return SQLRedaction.withoutKeys(String(cString: expanded))
        }
        guard let text = sqlite3_sql(statement) else { return "" }
        if let known = redactedSQL[statement], strcmp(known.original, text) == 0 { return known.redacted }
        let original = String(cString: text)
        let redacted = SQLRedaction.redacted(original)
        if redactedSQL.count >= 256 { redactedSQL.removeAll(keepingCapacity: true) }
        redactedSQL[statement] = (original, redacted)
        return redacted
    }
}
