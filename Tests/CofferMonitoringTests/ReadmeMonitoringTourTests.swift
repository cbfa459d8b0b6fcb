import Coffer
import CofferTestSupport
import Foundation
import Metrics
import Prometheus
import XCTest

/// The README's "Traces and metrics" tour, compiled and run as written, against swift-prometheus (a real
/// swift-metrics backend): what the registry exposes after some work is Coffer's counters for this file.
final class ReadmeMonitoringTourTests: XCTestCase {
    func testTheMonitoringTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let passphrase = "tour"
        let path = dir.path("app.db")

        // README: ### Traces and metrics
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))  // once, at launch

        var configuration = Configuration(encryption: .passphrase(passphrase))
        configuration.monitoring.metrics = true  // counters and timers, to the bootstrapped backend
        configuration.monitoring.statements = .slow(threshold: 0.050)  // statements over 50 ms, to the logger
        configuration.monitoring.writerWaits = .slow(threshold: 0.100)  // who waited for the writer, behind whom
        configuration.monitoring.spans = true  // coffer.write, coffer.backup, … spans, to the app's tracer
        let database = try Database(path: path, configuration: configuration)
        // README end

        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(body TEXT)")
            try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["hello"])
        }
        _ = try database.read { db in try db.fetchAll(sql: "SELECT body FROM note") }
        try database.close()

        // README: exposition
        let exposition = registry.emitToString()  // serve it at /metrics
        // README end
        let statements = exposition.split(separator: "\n").first { $0.hasPrefix("coffer_statements{database=\"app.db\"} ") }
        XCTAssertGreaterThanOrEqual(Int(statements?.split(separator: " ").last ?? "") ?? 0, 5, exposition)
        XCTAssertTrue(exposition.contains("coffer_rows_written{database=\"app.db\"} 1"), exposition)
        XCTAssertTrue(exposition.contains("coffer_rows_read{database=\"app.db\"} "), exposition)
        XCTAssertTrue(exposition.contains("coffer_statement_duration"), exposition)
    }
}
