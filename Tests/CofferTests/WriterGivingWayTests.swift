import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferEngine

/// A use of the writer that gives way (`SerializedConnection.givingWay`, what a live migration's batch
/// runs in): the next caller that queues interrupts its statement and it rolls back; the caller's own
/// statements are never interrupted.
final class WriterGivingWayTests: XCTestCase {
    /// What the other thread's write ended with.
    private final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<Void, any Error>?
        func set(_ value: Result<Void, any Error>) { lock.withLock { result = value } }
        var value: Result<Void, any Error>? { lock.withLock { result } }
    }

    /// A statement that would run for minutes (an `INSERT` of 10^9 rows from a recursive CTE) stops when
    /// another thread's write queues; that write commits its row, the long one none.
    func testAQueuedWriteInterruptsTheUseThatGivesWayAndCommitsItsOwnRow() throws {
        let database = try Database.temporary()
        try database.write { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        let started = DispatchSemaphore(value: 0)
        let appDone = DispatchSemaphore(value: 0)
        let appResult = Outcome()
        Thread {
            started.wait()
            // Queue while the long statement runs (or just before it starts: it is interrupted either way).
            usleep(20_000)
            appResult.set(Result { try database.write { try $0.execute(sql: "INSERT INTO t VALUES (-1)") } })
            appDone.signal()
        }.start()

        var askedWhenStopped = false
        XCTAssertThrowsError(
            try database.write { db in
                try database.writer.givingWay(db) { asked in
                    XCTAssertFalse(asked())
                    started.signal()
                    do {
                        try db.execute(
                            sql: """
                                WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 1000000000) \
                                INSERT INTO t SELECT n FROM c
                                """)
                    } catch {
                        askedWhenStopped = asked()
                        throw error
                    }
                }
            }
        )
        XCTAssertTrue(askedWhenStopped, "the long statement stopped because a write queued")
        XCTAssertEqual(appDone.wait(timeout: .now() + 60), .success)
        XCTAssertNoThrow(try appResult.value?.get(), "the queued write is not interrupted")
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 1)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT x FROM t") }, -1)
        // The next uses of the writer run their statements to the end.
        try database.write { try $0.execute(sql: "INSERT INTO t SELECT x - 1 FROM t") }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT sum(x) FROM t") }, -3)
    }

    /// With nobody waiting, a use that gives way runs to its end and commits, and a caller that queues
    /// after it ended is not interrupted by it.
    func testWithNobodyWaitingItRunsToTheEnd() throws {
        let database = try Database.temporary()
        try database.write { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        let asked = try database.write { db in
            try database.writer.givingWay(db) { asked in
                try db.execute(
                    sql:
                        "WITH RECURSIVE c(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c WHERE n < 10000) INSERT INTO t SELECT n FROM c"
                )
                return asked()
            }
        }
        XCTAssertFalse(asked)
        try database.write { try $0.execute(sql: "INSERT INTO t VALUES (0)") }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 10_001)
    }
}
