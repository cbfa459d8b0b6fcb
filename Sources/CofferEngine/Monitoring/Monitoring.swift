import CoreMetrics
import Foundation
import Tracing

/// What Coffer reports about its own work, through the ecosystem's APIs: statement traces and lock waits
/// through swift-log (``Configuration/logger``), counters and timers through swift-metrics, spans around
/// transactions and long work through swift-distributed-tracing. Everything is off by default, and off
/// costs nothing: no trace callback is installed on any connection.
///
/// ```swift
/// import Metrics
/// import Prometheus
///
/// let registry = PrometheusCollectorRegistry()
/// MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))
///
/// var configuration = Configuration(encryption: .passphrase(passphrase))
/// configuration.monitoring.metrics = true
/// configuration.monitoring.statements = .slow(threshold: 0.050)  // log statements slower than 50 ms
/// configuration.monitoring.writerWaits = .slow(threshold: 0.100)  // log waits for the writer over 100 ms
/// let database = try Database(path: "app.db", configuration: configuration)
/// ```
///
/// Traced SQL never holds a bound value or a literal (each becomes `?`) unless
/// ``includesValues`` is set, and never a key or passphrase even then. See <doc:Monitoring> for the
/// metric names and the cost of each level.
public struct Monitoring: Sendable {
    /// Which statements are traced: logged through ``Configuration/logger`` (at `info` for slow ones,
    /// `debug` for the rest) and given to ``onStatement``.
    public enum StatementTracing: Sendable, Equatable {
        /// No statement trace.
        case off
        /// Statements that took at least `threshold` seconds.
        case slow(threshold: TimeInterval)
        /// Every statement.
        case all
    }

    /// Which waits are traced: for the writer (``writerWaits``: a `write` queued behind another operation
    /// of this database) or for a database lock (``lockWaits``: held by another process or another
    /// `Database` on the same file).
    public enum WaitTracing: Sendable, Equatable {
        /// No wait trace.
        case off
        /// Waits of at least `threshold` seconds, logged at `notice` with who holds what was waited for.
        case slow(threshold: TimeInterval)
    }

    /// Whether counters and timers are recorded (names in <doc:Monitoring>). Default false.
    public var metrics: Bool
    /// Where metrics go; nil (the default) uses `MetricsSystem.factory`, which the app bootstraps.
    public var metricsFactory: (any MetricsFactory)?
    /// The statement trace. Default ``StatementTracing/off``.
    public var statements: StatementTracing
    /// Whether traced SQL shows bound values and literals (`sqlite3_expanded_sql`). Default false. Keys
    /// and passphrases are never shown.
    public var includesValues: Bool
    /// Called with each traced statement, on the thread that ran it; keep it short.
    public var onStatement: (@Sendable (StatementTrace) -> Void)?
    /// The trace of waits for the writer. Default ``WaitTracing/off``.
    public var writerWaits: WaitTracing
    /// The trace of waits for a lock on the database's files that another connection holds — another
    /// process (an app extension, a shell), or another ``Database`` on the same file in this process.
    /// Default ``WaitTracing/off``. When a statement has waited `threshold` seconds, Coffer logs
    /// `waiting for a database lock` with the processes holding the file's locks and which lock each holds
    /// (`holders`: `pid 4242 (WAL write lock)`, read from `/proc/locks` on Linux); if the wait ends in
    /// `SQLITE_BUSY`, `gave up waiting for a database lock` follows. Off, SQLite's own busy timeout runs
    /// and nothing is timed.
    public var lockWaits: WaitTracing
    /// Whether transactions and long work (backup, restore, repair, migration, full-text rebuilds) run in
    /// swift-distributed-tracing spans. Default false.
    public var spans: Bool
    /// The tracer spans go to; nil (the default) uses `InstrumentationSystem.tracer`.
    public var tracer: (any Tracer)?
    /// The `database` dimension of every metric and the `db.name` attribute of every span; nil (the
    /// default) uses the file's name.
    public var databaseLabel: String?

    /// Creates a monitoring configuration with everything off.
    public init() {
        metrics = false
        metricsFactory = nil
        statements = .off
        includesValues = false
        onStatement = nil
        writerWaits = .off
        lockWaits = .off
        spans = false
        tracer = nil
        databaseLabel = nil
    }

    /// Whether connections need a statement monitor (a trace listener).
    var monitorsStatements: Bool { metrics || statements != .off }
}
