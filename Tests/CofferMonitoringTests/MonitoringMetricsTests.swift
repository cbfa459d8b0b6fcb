import CofferTestSupport
import MetricsTestKit
import XCTest

@testable import Coffer

final class MonitoringMetricsTests: XCTestCase {
    func testCountersFollowStatementsRowsPagesCheckpointsAndBackups() throws {
        let directory = try TemporaryDirectory()
        let metrics = TestMetrics()
        var configuration = Configuration(encryption: .passphrase("metrics"))
        configuration.monitoring.metrics = true
        configuration.monitoring.metricsFactory = metrics
        configuration.monitoring.databaseLabel = "chat"
        let database = try Database(path: directory.path("metrics.db"), configuration: configuration)
        defer { try? database.close() }
        let dimensions = [("database", "chat")]
        func total(_ label: String) -> Int64 { metrics.counterTotal(label: label, dimensions: dimensions) }

        try database.write { db in try db.execute(sql: "CREATE TABLE message(id INTEGER PRIMARY KEY, body TEXT)") }
        let before = ["coffer_statements", "coffer_rows_written"].map(total)
        try database.write { db in
            for index in 0..<200 {
                try db.execute(sql: "INSERT INTO message(body) VALUES (?)", arguments: ["message \(index)"])
            }
        }
        XCTAssertEqual(total("coffer_rows_written") - before[1], 200)
        // BEGIN, 200 INSERTs, COMMIT.
        XCTAssertEqual(total("coffer_statements") - before[0], 202)
        XCTAssertGreaterThan(total("coffer_pages_written"), 0)
        XCTAssertEqual(try metrics.expectTimer("coffer_statement_duration", dimensions).values.count, Int(before[0]) + 202)

        let readBefore = total("coffer_rows_read")
        let read = try database.read { db in try db.fetchAll(sql: "SELECT body FROM message").count }
        XCTAssertEqual(read, 200)
        XCTAssertEqual(total("coffer_rows_read") - readBefore, 200)
        XCTAssertGreaterThan(total("coffer_pages_read") + total("coffer_page_cache_hits"), 0)
        XCTAssertGreaterThan(total("coffer_decryptions") + total("coffer_decrypted_page_cache_hits"), 0)

        try database.write { db in try db.execute(sql: "DELETE FROM message WHERE id % 2 = 0") }
        try database.checkpoint(.truncate)
        XCTAssertGreaterThanOrEqual(total("coffer_checkpoints"), 1)
        XCTAssertGreaterThan(total("coffer_checkpoint_pages"), 0)

        let generation = try database.backup(to: directory.url.appendingPathComponent("backups"))
        XCTAssertEqual(total("coffer_backup_bytes"), Int64(generation.byteCount))
        XCTAssertGreaterThan(generation.byteCount, 0)
    }

    func testWaitsForTheWriterAreTimed() throws {
        let directory = try TemporaryDirectory()
        let metrics = TestMetrics()
        var configuration = Configuration()
        configuration.monitoring.metrics = true
        configuration.monitoring.metricsFactory = metrics
        let database = try Database(path: directory.path("waits.db"), configuration: configuration)
        defer { try? database.close() }
        for _ in 0..<3 { try database.write { db in try db.execute(sql: "CREATE TABLE IF NOT EXISTS t(x)") } }
        let timer = try metrics.expectTimer("coffer_writer_wait_duration", [("database", "waits.db")])
        XCTAssertGreaterThanOrEqual(timer.values.count, 3, "each use of the writer records its wait")
    }
}
