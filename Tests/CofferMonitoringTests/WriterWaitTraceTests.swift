import CofferTestSupport
import Foundation
import InMemoryLogging
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

final class WriterWaitTraceTests: XCTestCase {
    /// A checkpoint queued behind a long write is logged with both operations named.
    func testAWaitOverTheThresholdNamesTheWaitingAndTheHoldingOperation() throws {
        let directory = try TemporaryDirectory()
        let log = InMemoryLogHandler()
        var configuration = Configuration()
        configuration.logger = log.logger(level: .notice)
        configuration.monitoring.writerWaits = .slow(threshold: 0.05)
        let database = try Database(path: directory.path("wait.db"), configuration: configuration)
        defer { try? database.close() }
        try database.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        XCTAssertTrue(log.entries.isEmpty, "an uncontended write waits for nothing")

        let holding = DispatchSemaphore(value: 0)
        let writer = Thread {
            try? database.write { db in
                holding.signal()
                // The holder keeps the writer long enough for the checkpoint behind it to wait.
                Thread.sleep(forTimeInterval: 0.3)
                try db.execute(sql: "INSERT INTO t VALUES (1)")
            }
        }
        writer.start()
        holding.wait()
        try database.checkpoint()
        let entry = try XCTUnwrap(log.entries.first { $0.message == "waited for the writer" })
        XCTAssertEqual(entry.level, .notice)
        XCTAssertEqual(entry.metadata["waiting"], "checkpoint(_:)")
        XCTAssertEqual(entry.metadata["holder"], "write(_:)")
        let waited = Double("\(entry.metadata["waited_ms"] ?? "0")") ?? 0
        XCTAssertGreaterThanOrEqual(waited, 50)
    }
}
