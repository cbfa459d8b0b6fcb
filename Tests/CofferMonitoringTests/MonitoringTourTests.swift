import Coffer
import CofferTestSupport
import Foundation
import Metrics
import Prometheus
import XCTest

/// Monitoring.md's "In brief" example (once the README's "Traces and metrics" tour), compiled and run as
/// written, against swift-prometheus (a real swift-metrics backend): what the registry exposes after some
/// work is Coffer's counters for this file. CofferDocumentationTests, which runs the articles' other
/// blocks, does not link swift-prometheus, so the article marks this block "not compiled" and
/// `testTheArticleBlockIsThisTest` keeps the two in step.
final class MonitoringTourTests: XCTestCase {
    func testTheMonitoringTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let passphrase = "tour"
        let path = dir.path("app.db")

        // Monitoring.md: In brief
        let registry = PrometheusCollectorRegistry()
        MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: registry))  // once, at launch

        var configuration = Configuration(encryption: .passphrase(passphrase))
        configuration.monitoring.metrics = true  // counters and timers, to the bootstrapped backend
        configuration.monitoring.statements = .slow(threshold: 0.050)  // statements over 50 ms, to the logger
        configuration.monitoring.writerWaits = .slow(threshold: 0.100)  // who waited for the writer, behind whom
        configuration.monitoring.lockWaits = .slow(threshold: 0.500)  // which process held a lock a statement waited for
        configuration.monitoring.spans = true  // coffer.write, coffer.backup, … spans, to the app's tracer
        let database = try Database(path: path, configuration: configuration)
        // Monitoring.md end

        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(body TEXT)")
            try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["hello"])
        }
        _ = try database.read { db in try db.fetchAll(sql: "SELECT body FROM note") }
        try database.close()

        // exposition
        let exposition = registry.emitToString()  // serve it at /metrics
        // Monitoring.md end
        let statements = exposition.split(separator: "\n").first { $0.hasPrefix("coffer_statements{database=\"app.db\"} ") }
        XCTAssertGreaterThanOrEqual(Int(statements?.split(separator: " ").last ?? "") ?? 0, 5, exposition)
        XCTAssertTrue(exposition.contains("coffer_rows_written{database=\"app.db\"} 1"), exposition)
        XCTAssertTrue(exposition.contains("coffer_rows_read{database=\"app.db\"} "), exposition)
        XCTAssertTrue(exposition.contains("coffer_statement_duration"), exposition)
    }
    /// Monitoring.md's "In brief" block, after its "not compiled" line, is the marked part of the test above
    /// (lines trimmed, in order).
    func testTheArticleBlockIsThisTest() throws {
        let here = URL(fileURLWithPath: #filePath)
        let article = try String(
            contentsOf: here.deletingLastPathComponent().appendingPathComponent(
                "../../Sources/Coffer/Documentation.docc/Monitoring.md"),
            encoding: .utf8)
        let source = try String(contentsOf: here, encoding: .utf8)
        let marked = try XCTUnwrap(
            Self.trimmedLines(of: source, between: "// Monitoring.md: In brief\n", and: "// Monitoring.md end"))
        let notCompiled = "// not compiled: needs swift-prometheus; MonitoringTourTests (CofferMonitoringTests) runs it\n"
        let block = try XCTUnwrap(Self.trimmedLines(of: article, between: "```swift\n" + notCompiled, and: "```"))
        XCTAssertEqual(block, marked)
    }

    private static func trimmedLines(of text: String, between begin: String, and end: String) -> [String]? {
        guard let start = text.range(of: begin), let stop = text.range(of: end, range: start.upperBound..<text.endIndex) else {
            return nil
        }
        return text[start.upperBound..<stop.lowerBound].split(separator: "\n")
            .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
