import CofferTestSupport
import InMemoryTracing
import Tracing
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

final class MonitoringSpanTests: XCTestCase {
    func testTransactionsAndLongWorkRunInSpans() throws {
        let directory = try TemporaryDirectory()
        let tracer = InMemoryTracer()
        var configuration = Configuration(encryption: .passphrase("spans"))
        configuration.monitoring.spans = true
        configuration.monitoring.tracer = tracer
        let database = try Database(path: directory.path("spans.db"), configuration: configuration)
        defer { try? database.close() }

        try database.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        _ = try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }
        XCTAssertThrowsError(try database.write { db in try db.execute(sql: "INSERT INTO missing VALUES (1)") })
        let transactions = tracer.finishedSpans
        XCTAssertEqual(transactions.map(\.operationName), ["coffer.write", "coffer.read", "coffer.write"])
        XCTAssertTrue(transactions[0].errors.isEmpty)
        XCTAssertEqual(transactions[2].errors.count, 1, "the failed write's error is on its span")
        try database.backup(to: directory.url.appendingPathComponent("backups"))
        var migrator = Migrator()
        migrator.register("add index") { db in try db.execute(sql: "CREATE INDEX tx ON t(x)") }
        try migrator.migrate(database)

        let spans = tracer.finishedSpans
        XCTAssertEqual(spans.filter { $0.operationName == "coffer.backup" }.count, 1)
        XCTAssertEqual(spans.filter { $0.operationName == "coffer.migrate" }.count, 1)
        for span in spans {
            XCTAssertEqual(span.attributes["db.name"]?.toSpanAttribute(), "spans.db")
            XCTAssertEqual(span.attributes["db.system"]?.toSpanAttribute(), "sqlite")
        }
        // The migration's writes are children of its span.
        let migrate = try XCTUnwrap(spans.first { $0.operationName == "coffer.migrate" })
        XCTAssertTrue(spans.contains { $0.parentSpanID == migrate.spanID })
    }

    func testSpansOffTouchNoTracer() throws {
        let tracer = InMemoryTracer()
        var configuration = Configuration()
        configuration.monitoring.tracer = tracer
        let database = try Database.inMemory(configuration: configuration)
        try database.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        XCTAssertTrue(tracer.finishedSpans.isEmpty)
    }
}
