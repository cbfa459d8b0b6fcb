import CofferTestSupport
import MetricsTestKit
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

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
        // Every statement so far ran on the writer, whose first statement and every 16th after it are timed
        // (the timer samples; the counter counts all).
        let writerStatements = Int(before[0]) + 202
        XCTAssertEqual(
            try metrics.expectTimer("coffer_statement_duration", dimensions).values.count,
            (writerStatements + StepCounter.sampleInterval - 1) / StepCounter.sampleInterval)

        let readBefore = total("coffer_rows_read")
        let read = try database.read { db in try db.fetchAll(sql: "SELECT body FROM message").count }
        XCTAssertEqual(read, 200)
        XCTAssertEqual(total("coffer_rows_read") - readBefore, 200)
        XCTAssertGreaterThan(total("coffer_pages_read") + total("coffer_page_cache_hits"), 0)
        // Decryptions are counted by the decrypted-page cache's provider, on SQLCipher 3.4.1 and 4.x.
        XCTAssertGreaterThan(total("coffer_decryptions") + total("coffer_decrypted_page_cache_hits"), 0)

        try database.write { db in try db.execute(sql: "DELETE FROM message WHERE id % 2 = 0") }
        try database.checkpoint(.truncate)
        XCTAssertGreaterThanOrEqual(total("coffer_checkpoints"), 1)
        XCTAssertGreaterThan(total("coffer_checkpoint_pages"), 0)

        let generation = try database.backup(to: directory.url.appendingPathComponent("backups"))
        XCTAssertEqual(total("coffer_backup_bytes"), Int64(generation.byteCount))
        XCTAssertGreaterThan(generation.byteCount, 0)
    }

    /// Statements are counted on the connection and reach the metrics when their transaction ends (or at
    /// once for a statement outside any transaction), rows read included without SQLite's row trace.
    func testCountsReachTheMetricsWhenTheTransactionEnds() throws {
        let directory = try TemporaryDirectory()
        let metrics = TestMetrics()
        var configuration = Configuration()
        configuration.monitoring.metrics = true
        configuration.monitoring.metricsFactory = metrics
        let database = try Database(path: directory.path("flush.db"), configuration: configuration)
        defer { try? database.close() }
        let dimensions = [("database", "flush.db")]
        func total(_ label: String) -> Int64 { metrics.counterTotal(label: label, dimensions: dimensions) }

        let start = total("coffer_statements")
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            for value in 0..<10 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) }
            XCTAssertEqual(total("coffer_statements"), start, "nothing is recorded inside the transaction")
            XCTAssertEqual(total("coffer_rows_written"), 0)
        }
        // BEGIN, CREATE, 10 INSERTs, COMMIT.
        XCTAssertEqual(total("coffer_statements") - start, 13)
        XCTAssertEqual(total("coffer_rows_written"), 10)

        try database.writeWithoutTransaction { db in
            try db.execute(sql: "INSERT INTO t VALUES (10)")
            XCTAssertEqual(total("coffer_statements") - start, 14, "an autocommit statement is its own transaction")
            XCTAssertEqual(total("coffer_rows_written"), 11)
        }
        let rows = try database.read { db in
            try db.fetchAll(sql: "SELECT x FROM t WHERE x < 5").count + db.fetchAll(sql: "SELECT x FROM t").count
        }
        XCTAssertEqual(rows, 16)
        XCTAssertEqual(total("coffer_rows_read"), 16)
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
