import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Cancelling the task that awaits an async `read` or `write`, or iterates an observation, interrupts the
/// statement running for it, and only that one: real files, real reader and writer threads.
final class CancellationTests: XCTestCase {
    /// A statement that runs for seconds: counts up to `limit` with a recursive CTE.
    static func slowCount(_ limit: Int = 200_000_000) -> String {
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < \(limit)) SELECT count(*) FROM c"
    }

    private func makeDatabase(readers: Int = 1) throws -> (TemporaryDirectory, Database) {
        let directory = try TemporaryDirectory()
        var configuration = Configuration(encryption: .passphrase("cancel"))
        configuration.readerCount = readers
        let database = try Database(path: directory.path("cancel.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, value INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO item(value) VALUES (1), (2), (3)")
        }
        return (directory, database)
    }

    /// A synchronous read of one value (a sync function: async tests would otherwise pick the async twin).
    static func value(_ database: Database, _ sql: String) throws -> Int? {
        try database.read { db in try db.fetchValue(Int.self, sql: sql) }
    }

    private final class Flag: @unchecked Sendable {
        private let lock = NSLock()
        private var value = false
        func set() { lock.withLock { value = true } }
        var isSet: Bool { lock.withLock { value } }
    }

    func testCancellingAnAsyncReadInterruptsItsStatement() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let slow = Self.slowCount()
        let task = Task { try await database.read { db in try db.fetchValue(Int.self, sql: slow) } }
        try await Task.sleep(nanoseconds: 100_000_000)
        let cancelled = DispatchTime.now().uptimeNanoseconds
        task.cancel()
        do {
            _ = try await task.value
            XCTFail("the read was not interrupted")
        } catch is CancellationError {
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - cancelled) / 1e9
            XCTAssertLessThan(seconds, 1, "the statement ran on after the cancel")
        }
        // The one reader is back in the pool, outside any transaction, and works.
        let count = try await database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
        XCTAssertEqual(count, 3)
        XCTAssertEqual(try Self.value(database, Self.slowCount(1000)), 1000)
    }

    func testCancellingTheTaskIteratingAnObservationInterruptsItsFetch() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let slow = Self.slowCount()
        let fetching = DispatchSemaphore(value: 0)
        let task = Task {
            for try await value in database.observe({ db -> Int in
                fetching.signal()
                return try db.fetchValue(Int.self, sql: slow) ?? 0
            }) {
                XCTFail("the first value arrived: \(value)")
            }
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                fetching.wait()
                continuation.resume()
            }
        }
        try await Task.sleep(nanoseconds: 50_000_000)
        let cancelled = DispatchTime.now().uptimeNanoseconds
        task.cancel()
        _ = await task.result
        // The one reader comes back at SQLite's next step, not after the seconds the fetch would take.
        let count = try await database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - cancelled) / 1e9
        XCTAssertEqual(count, 3)
        XCTAssertLessThan(seconds, 1, "the observation's fetch ran on after the cancel")
    }

    func testCancellingAnObservationInterruptsItsFetch() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let slow = Self.slowCount()
        let fetching = DispatchSemaphore(value: 0)
        let delivered = Flag()
        let observation = database.observe(
            on: .global(),
            { db -> Int in
                fetching.signal()
                return try db.fetchValue(Int.self, sql: slow) ?? 0
            }, onError: { _ in delivered.set() }, onChange: { _ in delivered.set() })
        XCTAssertEqual(fetching.wait(timeout: .now() + 10), .success)
        Thread.sleep(forTimeInterval: 0.05)
        let cancelled = DispatchTime.now().uptimeNanoseconds
        observation.cancel()
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 3)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - cancelled) / 1e9
        XCTAssertLessThan(seconds, 1, "the observation's fetch ran on after the cancel")
        Thread.sleep(forTimeInterval: 0.1)
        XCTAssertFalse(delivered.isSet, "a cancelled observation delivers nothing, not even the interrupt")
    }

    func testCancellingAnAsyncWriteRollsItBack() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let slow = Self.slowCount()
        let task = Task {
            try await database.write { db in
                try db.execute(sql: "INSERT INTO item(value) VALUES (4)")
                _ = try db.fetchValue(Int.self, sql: slow)
            }
        }
        try await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        do {
            try await task.value
            XCTFail("the write was not interrupted")
        } catch is CancellationError {}
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 3)
        try await database.write { db in try db.execute(sql: "INSERT INTO item(value) VALUES (5)") }
        XCTAssertEqual(try Self.value(database, "SELECT max(value) FROM item"), 5)
    }

    func testACancelBetweenStatementsStillRollsTheWriteBack() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let inside = Flag()
        let task = Task {
            try await database.write { db in
                try db.execute(sql: "INSERT INTO item(value) VALUES (4)")
                inside.set()
                // No statement runs while the cancel lands: SQLite's flag alone would be forgotten.
                Thread.sleep(forTimeInterval: 0.2)
                try db.execute(sql: "INSERT INTO item(value) VALUES (5)")
            }
        }
        while !inside.isSet { try await Task.sleep(nanoseconds: 1_000_000) }
        task.cancel()
        do {
            try await task.value
            XCTFail("a cancelled write committed")
        } catch is CancellationError {}
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 3)
    }

    /// Starts the task `start` makes (its closure sets `inside`, then waits for `cancelled`), cancels it once
    /// inside, lets the closure go on, and expects the call to throw `CancellationError`.
    private func cancelMidway(_ start: (Flag, DispatchSemaphore) -> Task<Void, any Error>) async throws {
        let inside = Flag()
        let cancelled = DispatchSemaphore(value: 0)
        let task = start(inside, cancelled)
        while !inside.isSet { try await Task.sleep(nanoseconds: 1_000_000) }
        task.cancel()
        cancelled.signal()
        do {
            try await task.value
            XCTFail("a cancelled call completed")
        } catch is CancellationError {}
    }

    /// The statements a closure runs after a cancel that landed between two of them do not run: each fails
    /// at once (SQLite's interrupt is kept in force for the call), so a long closure stops early.
    func testStatementsAfterACancelBetweenStatementsDoNotRun() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let ran = ObservedValues<Int>()
        try await cancelMidway { inside, cancelled in
            Task {
                try await database.write { db in
                    try db.execute(sql: "INSERT INTO item(value) VALUES (4)")
                    inside.set()
                    cancelled.wait()
                    for value in 5..<105 {
                        do {
                            try db.execute(sql: "INSERT INTO item(value) VALUES (?)", arguments: [value])
                            ran.append(value)
                        } catch {}
                    }
                }
            }
        }
        XCTAssertEqual(ran.values, [], "statements ran after the cancel")
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 3)
        // The writer works again, its interrupt forgotten.
        try await database.write { db in try db.execute(sql: "INSERT INTO item(value) VALUES (6)") }
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 4)
    }

    /// The same for a read of several statements.
    func testReadStatementsAfterACancelDoNotRun() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let ran = ObservedValues<Int>()
        try await cancelMidway { inside, cancelled in
            Task {
                try await database.read { db in
                    _ = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM item")
                    inside.set()
                    cancelled.wait()
                    for value in 0..<100 where (try? db.fetchValue(Int.self, sql: "SELECT count(*) FROM item")) != nil {
                        ran.append(value)
                    }
                }
            }
        }
        XCTAssertEqual(ran.values, [], "statements ran after the cancel")
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 3)
    }

    func testATaskCancelledBeforeItStartsRunsNothing() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let ran = Flag()
        let task = Task {
            // Cancelled before the first await returns.
            withUnsafeCurrentTask { $0?.cancel() }
            try await database.write { db in
                ran.set()
                try db.execute(sql: "INSERT INTO item(value) VALUES (9)")
            }
        }
        do {
            try await task.value
            XCTFail("a cancelled task wrote")
        } catch is CancellationError {}
        XCTAssertFalse(ran.isSet)
        XCTAssertEqual(try Self.value(database, "SELECT count(*) FROM item"), 3)
    }

    func testAQueuedWriteCancelledWhileWaitingRunsNothing() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let ran = Flag()
        let blocking = Task { try await database.write { _ in Thread.sleep(forTimeInterval: 0.3) } }
        try await Task.sleep(nanoseconds: 50_000_000)
        let queued = Task { try await database.write { db in ran.set() } }
        try await Task.sleep(nanoseconds: 50_000_000)
        queued.cancel()
        try await blocking.value
        do {
            try await queued.value
            XCTFail("a cancelled queued write ran")
        } catch is CancellationError {}
        XCTAssertFalse(ran.isSet)
    }

    /// Tasks cancelled at random moments share one reader with tasks that are never cancelled: a late
    /// cancel must never interrupt another task's statement on the same connection.
    func testALateCancelNeverInterruptsAnotherTasksStatement() async throws {
        let (directory, database) = try makeDatabase(readers: 1)
        defer { withExtendedLifetime(directory) {} }
        var generator = SeededGenerator(seed: 41)
        let short = Self.slowCount(2000)
        let longer = Self.slowCount(20_000)
        for _ in 0..<200 {
            let cancelled = Task { try await database.read { db in try db.fetchValue(Int.self, sql: short) } }
            let kept = Task { try await database.read { db in try db.fetchValue(Int.self, sql: longer) } }
            let delay = UInt64(generator.next(upTo: 400))
            try await Task.sleep(nanoseconds: delay * 1000)
            cancelled.cancel()
            _ = try? await cancelled.value
            let value = try await kept.value
            XCTAssertEqual(value, 20_000)
        }
    }
}
