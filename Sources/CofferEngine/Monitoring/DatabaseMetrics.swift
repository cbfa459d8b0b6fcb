import CoreMetrics
import Foundation

/// The counters and timers of one database (``Monitoring/metrics``), made once at open and shared by its
/// connections. The names are listed in <doc:Monitoring>.
package final class DatabaseMetrics: Sendable {
    let statements: Counter
    let statementDuration: CoreMetrics.Timer
    let rowsRead: Counter
    let rowsWritten: Counter
    let pagesRead: Counter
    let pageCacheHits: Counter
    let pagesWritten: Counter
    let checkpoints: Counter
    let checkpointPages: Counter
    package let backupBytes: Counter
    let writerWaits: Counter
    let writerWaitDuration: CoreMetrics.Timer
    let decryptions: Counter
    let decryptedPageCacheHits: Counter
    let repairPages: Counter
    let repairRows: Counter
    let liveMigrationRows: Counter

    init(factory: any MetricsFactory, label: String) {
        let dimensions = [("database", label)]
        func counter(_ name: String) -> Counter { Counter(label: name, dimensions: dimensions, factory: factory) }
        func timer(_ name: String) -> CoreMetrics.Timer {
            CoreMetrics.Timer(label: name, dimensions: dimensions, factory: factory)
        }
        statements = counter("coffer_statements")
        statementDuration = timer("coffer_statement_duration")
        rowsRead = counter("coffer_rows_read")
        rowsWritten = counter("coffer_rows_written")
        pagesRead = counter("coffer_pages_read")
        pageCacheHits = counter("coffer_page_cache_hits")
        pagesWritten = counter("coffer_pages_written")
        checkpoints = counter("coffer_checkpoints")
        checkpointPages = counter("coffer_checkpoint_pages")
        backupBytes = counter("coffer_backup_bytes")
        writerWaits = counter("coffer_writer_waits")
        writerWaitDuration = timer("coffer_writer_wait_duration")
        decryptions = counter("coffer_decryptions")
        decryptedPageCacheHits = counter("coffer_decrypted_page_cache_hits")
        repairPages = counter("coffer_repair_pages")
        repairRows = counter("coffer_repair_rows")
        liveMigrationRows = counter("coffer_live_migration_rows")
    }

    /// The metrics `monitoring` asks for on the database at `path`, or nil when metrics are off.
    static func make(for monitoring: Monitoring, path: String) -> DatabaseMetrics? {
        guard monitoring.metrics else { return nil }
        return DatabaseMetrics(
            factory: monitoring.metricsFactory ?? MetricsSystem.factory, label: monitoring.label(forPath: path))
    }

    /// Counts source rows a live migration's worker moved (CofferRecords' `LiveMigration`).
    package func recordLiveMigrationRows(_ count: Int) {
        if count > 0 { liveMigrationRows.increment(by: count) }
    }

    /// Adds the decrypted-page cache's work since the last call (its counts are process-wide: each
    /// database's counters get the share that happened since it last looked).
    func recordDecryptions(_ tally: DecryptionTally) {
        let (hits, computed) = tally.advance()
        if hits > 0 { decryptedPageCacheHits.increment(by: hits) }
        if computed > 0 { decryptions.increment(by: computed) }
    }
}

/// Where one database last read the process-wide decryption counts.
final class DecryptionTally: @unchecked Sendable {
    private let lock = NSLock()
    private var seen = DecryptedPageCache.counts

    /// The hits and computed decryptions since the previous call.
    func advance() -> (hits: Int, computed: Int) {
        let now = DecryptedPageCache.counts
        return lock.withLock {
            defer { seen = (max(seen.hits, now.hits), max(seen.misses, now.misses)) }
            return (max(0, now.hits - seen.hits), max(0, now.misses - seen.misses))
        }
    }
}

extension Monitoring {
    /// The `database` dimension for the file at `path`.
    func label(forPath path: String) -> String {
        databaseLabel ?? (path == ":memory:" ? path : URL(fileURLWithPath: path).lastPathComponent)
    }
}
