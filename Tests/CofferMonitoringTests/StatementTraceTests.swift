import CofferTestSupport
import InMemoryLogging
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

final class StatementTraceTests: XCTestCase {
    private func open(_ directory: TemporaryDirectory, _ adjust: (inout Monitoring) -> Void) throws -> (Database, TraceCollector)
    {
        let collector = TraceCollector()
        var configuration = Configuration(encryption: .passphrase("hunter2-passphrase"))
        configuration.monitoring.statements = .all
        configuration.monitoring.onStatement = { collector.append($0) }
        adjust(&configuration.monitoring)
        return (try Database(path: directory.path("trace.db"), configuration: configuration), collector)
    }

    func testEveryStatementIsTracedWithRowsAndPagesAndNoValues() throws {
        let directory = try TemporaryDirectory()
        let (database, collector) = try open(directory) { _ in }
        defer { try? database.close() }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, body TEXT)")
            for index in 0..<50 {
                try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["secret body \(index)"])
            }
            try db.execute(sql: "UPDATE note SET body = 'literal secret' WHERE id <= 10")
        }
        let count = try database.read { db in try db.fetchAll(sql: "SELECT body FROM note WHERE id > 5").count }
        XCTAssertEqual(count, 45)

        let traces = collector.traces
        let inserts = traces.filter { $0.sql == "INSERT INTO note(body) VALUES (?)" }
        XCTAssertEqual(inserts.count, 50)
        XCTAssertTrue(inserts.allSatisfy { $0.rowsWritten == 1 && $0.onWriter })
        let update = try XCTUnwrap(traces.first { $0.sql.hasPrefix("UPDATE") })
        XCTAssertEqual(update.sql, "UPDATE note SET body = ? WHERE id <= ?")
        XCTAssertEqual(update.rowsWritten, 10)
        XCTAssertNotNil(traces.last { $0.sql == "COMMIT TRANSACTION" && $0.onWriter })
        let select = try XCTUnwrap(traces.first { $0.sql.hasPrefix("SELECT body") })
        XCTAssertEqual(select.rowsRead, 45)
        XCTAssertFalse(select.onWriter)
        XCTAssertGreaterThan(select.pagesRead + select.pageCacheHits, 0)
        XCTAssertGreaterThan(select.fullScanSteps + 1, 0)
        for trace in traces {
            XCTAssertFalse(trace.sql.contains("secret"), trace.sql)
            XCTAssertFalse(trace.sql.contains("hunter2"), trace.sql)
            XCTAssertGreaterThanOrEqual(trace.duration, 0)
        }
    }

    func testValuesShowOnlyWhenAskedAndKeysNever() throws {
        let directory = try TemporaryDirectory()
        let (database, collector) = try open(directory) { $0.includesValues = true }
        defer { try? database.close() }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(body TEXT)")
            try db.execute(sql: "INSERT INTO note(body) VALUES (?)", arguments: ["visible value"])
        }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "ATTACH DATABASE ? AS other KEY 'hunter2-attached'", arguments: [directory.path("other.db")])
            try db.execute(sql: "DETACH DATABASE other")
        }
        let traces = collector.traces
        XCTAssertTrue(traces.contains { $0.sql == "INSERT INTO note(body) VALUES ('visible value')" }, "\(traces.map(\.sql))")
        let attach = try XCTUnwrap(traces.first { $0.sql.hasPrefix("ATTACH") })
        XCTAssertFalse(attach.sql.contains("hunter2"), attach.sql)
        XCTAssertTrue(attach.sql.hasSuffix("KEY ?"), attach.sql)
    }

    func testSlowThresholdFiltersAndLogsAtInfo() throws {
        let directory = try TemporaryDirectory()
        let log = InMemoryLogHandler()
        let collector = TraceCollector()
        var configuration = Configuration()
        configuration.logger = log.logger(level: .info)
        configuration.monitoring.statements = .slow(threshold: 0.05)
        configuration.monitoring.onStatement = { collector.append($0) }
        let database = try Database(path: directory.path("slow.db"), configuration: configuration)
        defer { try? database.close() }
        _ = try database.read { db in try db.fetchValue(Int.self, sql: "SELECT 41 + 1") }
        // Five million steps of a recursive CTE, about ten times the threshold here (two million took under
        // 0.2 s on a fast machine, and this test once used 0.2 s as its threshold); the fast statement takes
        // microseconds.
        let total = try database.read { db in
            try db.fetchValue(
                Int.self,
                sql: "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 5000000) SELECT count(*) FROM c")
        }
        XCTAssertEqual(total, 5_000_000)
        let traces = collector.traces
        XCTAssertTrue(traces.allSatisfy { $0.duration >= 0.05 }, "\(traces.map(\.duration))")
        XCTAssertFalse(traces.contains { $0.sql.hasPrefix("SELECT ? + ?") }, "a fast statement is not traced")
        let slow = try XCTUnwrap(traces.first { $0.sql.hasPrefix("WITH RECURSIVE") })
        XCTAssertTrue(slow.sql.contains("n < ?"), slow.sql)
        let entry = try XCTUnwrap(log.entries.first { $0.message == "slow statement" && $0.metadata["sql"] == "\(slow.sql)" })
        XCTAssertEqual(entry.level, .info)
        XCTAssertEqual(entry.metadata["rows_read"], "1")
        XCTAssertEqual(entry.metadata["connection"], "reader")
    }

    func testOffInstallsNoTraceAndListenersShareTheOneCallback() throws {
        let directory = try TemporaryDirectory()
        let plain = try Database(path: directory.path("off.db"))
        defer { try? plain.close() }
        try plain.write { db in XCTAssertFalse(db.traceListeners.isTracing, "monitoring off: no trace callback") }

        let (database, collector) = try open(directory) { _ in }
        defer { try? database.close() }
        try database.write { db in
            XCTAssertTrue(db.traceListeners.isTracing)
            try db.execute(sql: "CREATE TABLE t(x)")
            let (_, counted) = try db.countingStatements { try db.execute(sql: "INSERT INTO t VALUES (1)") }
            XCTAssertEqual(counted, 1)
            try db.execute(sql: "INSERT INTO t VALUES (2)")
        }
        XCTAssertEqual(collector.traces.filter { $0.sql == "INSERT INTO t VALUES (?)" }.count, 2, "the monitor kept listening")
    }
}
