import ArgumentParser
import Coffer
import Prometheus

/// `--monitoring`: the levels whose cost the Monitoring article reports (W1, W2, W4 against `off`).
enum MonitoringLevel {
    /// The registry the `metrics` level records into: a real backend, as an app would ship.
    static let registry = PrometheusCollectorRegistry()

    static func monitoring(named name: String) throws -> Monitoring {
        var monitoring = Monitoring()
        switch name {
        case "off": break
        case "metrics":
            monitoring.metrics = true
            monitoring.metricsFactory = PrometheusMetricsFactory(registry: registry)
        case "statements":
            monitoring.metrics = true
            monitoring.metricsFactory = PrometheusMetricsFactory(registry: registry)
            monitoring.statements = .all
            monitoring.onStatement = { trace in StatementSink.shared.take(trace) }
        default: throw ValidationError("--monitoring must be off, metrics or statements")
        }
        return monitoring
    }
}

/// Where the `statements` level's traces go: counted, as a handler that ships them would at least do.
final class StatementSink: @unchecked Sendable {
    static let shared = StatementSink()
    private var count = 0
    func take(_ trace: StatementTrace) { count &+= trace.sql.utf8.count > 0 ? 1 : 0 }
}
