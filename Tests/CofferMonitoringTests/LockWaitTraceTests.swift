import CofferTestSupport
import Foundation
import InMemoryLogging
import XCTest

@testable import Coffer
@testable import CofferEngine

/// ``Monitoring/lockWaits``: a statement waiting for a lock another process holds says which process holds
/// which lock; another `Database` of this process is named as such; off, nothing is logged.
final class LockWaitTraceTests: XCTestCase {
    private func makeDatabase(
        _ path: String, log: InMemoryLogHandler, trace: Monitoring.WaitTracing, busyTimeout: TimeInterval = 5
    ) throws -> Database {
        var configuration = Configuration()
        configuration.logger = log.logger(level: .notice)
        configuration.monitoring.lockWaits = trace
        configuration.busyTimeout = busyTimeout
        return try Database(path: path, configuration: configuration)
    }

    /// The `sqlite3` shell, another process, holds the WAL write lock for half a second: the write waits,
    /// succeeds, and the log names the shell's pid and the lock.
    func testAWaitForAnotherProcessNamesItsPidAndTheLock() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("locks.db")
        let log = InMemoryLogHandler()
        let database = try makeDatabase(path, log: log, trace: .slow(threshold: 0.1))
        defer { try? database.close() }
        try database.write { try $0.execute(sql: "CREATE TABLE t(x)") }

        let shell = try ShellSession("sqlite3", path)
        try shell.send("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); SELECT 'locked';")
        try shell.waitForLine("locked")
        let release = Thread {
            Thread.sleep(forTimeInterval: 0.5)
            try? shell.send("COMMIT; SELECT 'done';")
        }
        release.start()
        let started = Date()
        try database.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.4, "the write waited for the shell's commit")
        try shell.waitForLine("done")
        try shell.finish()

        let entry = try XCTUnwrap(log.entries.first { $0.message == "waiting for a database lock" }, "\(log.entries)")
        XCTAssertEqual(entry.level, .notice)
        let holders = "\(entry.metadata["holders"] ?? "")"
        #if os(Linux)
        XCTAssertTrue(holders.contains("pid \(shell.processIdentifier) (WAL write lock)"), holders)
        #endif
        XCTAssertGreaterThanOrEqual(Double("\(entry.metadata["waited_ms"] ?? "0")") ?? 0, 100)
        XCTAssertFalse(log.entries.contains { $0.message == "gave up waiting for a database lock" })
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 2)
    }

    /// A lock held past the busy timeout: the write throws `SQLITE_BUSY`, and the log says the wait gave up;
    /// nothing the shell committed is lost.
    func testAWaitPastTheTimeoutIsLoggedAsGivenUp() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("busy.db")
        let log = InMemoryLogHandler()
        let database = try makeDatabase(path, log: log, trace: .slow(threshold: 0.05), busyTimeout: 0.3)
        defer { try? database.close() }
        try database.write { try $0.execute(sql: "CREATE TABLE t(x)") }

        let shell = try ShellSession("sqlite3", path)
        try shell.send("BEGIN IMMEDIATE; INSERT INTO t VALUES (1); SELECT 'locked';")
        try shell.waitForLine("locked")
        do {
            try database.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }
            XCTFail("the write must give up while the shell holds the lock")
        } catch CofferError.busy {}
        try shell.send("COMMIT;")
        try shell.finish()
        XCTAssertTrue(log.entries.contains { $0.message == "waiting for a database lock" })
        XCTAssertTrue(log.entries.contains { $0.message == "gave up waiting for a database lock" })
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 1)
    }

    /// Two `Database` objects on one file in this process: the holder is no other process. With the trace
    /// off, the same wait logs nothing.
    func testAnotherDatabaseOfThisProcessIsNamedAsSuch() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("two.db")
        for trace in [Monitoring.WaitTracing.slow(threshold: 0.05), .off] {
            let log = InMemoryLogHandler()
            let first = try makeDatabase(path, log: log, trace: trace)
            let second = try makeDatabase(path, log: log, trace: trace)
            try first.write { try $0.execute(sql: "CREATE TABLE IF NOT EXISTS t(x)") }
            let holding = DispatchSemaphore(value: 0)
            let holder = Thread {
                try? first.write { db in
                    try db.execute(sql: "INSERT INTO t VALUES (1)")
                    holding.signal()
                    Thread.sleep(forTimeInterval: 0.3)
                }
            }
            holder.start()
            holding.wait()
            try second.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }
            let entries = log.entries.filter { $0.message == "waiting for a database lock" }
            if trace == .off {
                XCTAssertTrue(entries.isEmpty, "\(entries)")
            } else {
                let holders = "\(try XCTUnwrap(entries.first).metadata["holders"] ?? "")"
                #if os(Linux)
                XCTAssertEqual(holders, "no other process (another connection of this process)")
                #endif
            }
            try second.close()
            try first.close()
        }
    }
}
