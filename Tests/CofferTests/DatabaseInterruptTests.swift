import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `database.interrupt()` stops every running statement, readers' and writer's, from any thread; what was
/// committed stays, interrupted writes roll back, and every connection stays usable.
final class DatabaseInterruptTests: XCTestCase {
    private final class Outcomes: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [String] = []
        func add(_ value: String) { lock.withLock { values.append(value) } }
        var all: [String] { lock.withLock { values } }
    }

    private func makeDatabase(readers: Int = 4) throws -> (TemporaryDirectory, Database) {
        let directory = try TemporaryDirectory()
        var configuration = Configuration(encryption: .passphrase("interrupt"))
        configuration.readerCount = readers
        let database = try Database(path: directory.path("interrupt.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE ledger(round INTEGER NOT NULL, n INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO ledger VALUES (-1, 1), (-1, 2)")
        }
        return (directory, database)
    }

    /// Runs `body` on a new thread, in `group`.
    static func thread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        Thread {
            body()
            group.leave()
        }.start()
    }

    /// Opens `count` readers (each holds the others' reads until all started), so that the statements
    /// the test starts run at once instead of after their reader's open.
    static func openEveryReader(_ database: Database, count: Int) {
        let group = DispatchGroup()
        for _ in 0..<count {
            DispatchQueue.global().async(group: group) { _ = try? database.read { _ in usleep(200_000) } }
        }
        group.wait()
    }

    private static func outcome(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "finished"
        } catch CofferError.interrupt {
            return "interrupted"
        } catch {
            return "\(error)"
        }
    }

    func testInterruptStopsEveryReaderAndTheWriter() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let outcomes = Outcomes()
        let group = DispatchGroup()
        Self.openEveryReader(database, count: 4)
        // Threads of their own: GCD runs no more CPU-bound blocks at once than there are cores.
        for _ in 0..<4 {
            Self.thread(group) {
                outcomes.add(
                    Self.outcome { _ = try database.read { try $0.fetchValue(Int.self, sql: CancellationTests.slowCount()) } })
            }
        }
        Self.thread(group) {
            outcomes.add(
                Self.outcome {
                    try database.write { db in
                        try db.execute(sql: "INSERT INTO ledger VALUES (0, 1)")
                        try db.execute(
                            sql: "INSERT INTO ledger SELECT 0, * FROM (\(CancellationTests.slowCount()))")
                    }
                })
        }
        Thread.sleep(forTimeInterval: 0.3)
        let started = Date()
        database.interrupt()
        XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
        XCTAssertLessThan(Date().timeIntervalSince(started), 1)
        XCTAssertEqual(outcomes.all, Array(repeating: "interrupted", count: 5))
        // Nothing of the interrupted write, everything committed before; every connection works.
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM ledger") }, 2)
        try database.write { db in try db.execute(sql: "INSERT INTO ledger VALUES (1, 1)") }
        for _ in 0..<8 {
            DispatchQueue.global().async(group: group) {
                outcomes.add(
                    Self.outcome { _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM ledger") } })
            }
        }
        XCTAssertEqual(group.wait(timeout: .now() + 5), .success)
        XCTAssertEqual(outcomes.all.filter { $0 == "finished" }.count, 8)
    }

    func testAnInterruptWhileIdleDoesNotReachTheNextCall() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        database.interrupt()
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: CancellationTests.slowCount(50_000)) }, 50_000)
        try database.write { db in try db.execute(sql: "INSERT INTO ledger VALUES (0, 1)") }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM ledger") }, 3)
    }

    func testInterruptIsMatchedByItsCode() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { database.interrupt() }
        do {
            _ = try database.read { try $0.fetchValue(Int.self, sql: CancellationTests.slowCount()) }
            XCTFail("not interrupted")
        } catch let error as CofferError {
            XCTAssertEqual(error.code.primary, .interrupt)
        }
    }

    /// 1,000 seeded rounds: a write of ten rows (or a read) is interrupted, or its task cancelled, at a
    /// random moment; afterwards the round's rows are all there or none are, what earlier rounds committed
    /// is intact, and the next call works.
    func testInterruptAtRandomMomentsThousandRounds() async throws {
        let (directory, database) = try makeDatabase(readers: 2)
        defer { withExtendedLifetime(directory) {} }
        var generator = SeededGenerator(seed: 0xC0FFEE)
        var committedRows = 2
        var interrupted = 0
        for round in 0..<1000 {
            let useCancel = generator.next(upTo: 2) == 0
            let isWrite = generator.next(upTo: 3) != 0
            let length = 1000 + generator.next(upTo: 60_000)
            let delay = UInt64(generator.next(upTo: 3000))
            let task = Task { () -> Bool in
                if isWrite {
                    try await database.write { db in
                        try db.execute(sql: "INSERT INTO ledger VALUES (?, 0)", arguments: [round])
                        _ = try db.fetchValue(Int.self, sql: CancellationTests.slowCount(length))
                        try db.execute(
                            sql:
                                "INSERT INTO ledger SELECT ?, n FROM (SELECT count(*) AS n FROM (\(CancellationTests.slowCount(9))))",
                            arguments: [round])
                        try db.execute(
                            sql: """
                                INSERT INTO ledger SELECT ?, x + 1 FROM \
                                (WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 8) SELECT x FROM c)
                                """, arguments: [round])
                    }
                } else {
                    _ = try await database.read { db in try db.fetchValue(Int.self, sql: CancellationTests.slowCount(length)) }
                }
                return true
            }
            try await Task.sleep(nanoseconds: delay * 1000)
            if useCancel { task.cancel() } else { database.interrupt() }
            let finished: Bool
            do {
                finished = try await task.value
            } catch is CancellationError {
                finished = false
            } catch CofferError.interrupt {
                finished = false
            }
            if !finished { interrupted += 1 }
            let rows = try await database.read { db in
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM ledger WHERE round = ?", arguments: [round])
            }
            if isWrite {
                XCTAssertEqual(rows, finished ? 10 : 0, "round \(round)")
                if finished { committedRows += 10 }
            }
            // The writer and a reader both work after the round.
            try await database.write { db in try db.execute(sql: "SELECT 1") }
            let total = try await database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM ledger") }
            XCTAssertEqual(total, committedRows, "round \(round)")
        }
        XCTAssertGreaterThan(interrupted, 100, "the rounds hardly ever interrupted anything")
        XCTAssertEqual(try Self.integrity(database), "ok")
    }

    private static func integrity(_ database: Database) throws -> String? {
        try database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }
    }
}
