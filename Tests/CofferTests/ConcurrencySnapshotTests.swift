import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// One writer moves amounts between accounts while readers sum the balances: every snapshot a read
/// sees must add up to the same total, and nobody may see SQLITE_BUSY.
final class ConcurrencySnapshotTests: XCTestCase {
    private final class Tally: @unchecked Sendable {
        let lock = NSLock()
        var reads = 0, inconsistent = 0, writes = 0
        var errors: [String] = []
        var stop = false
        func add(_ body: (Tally) -> Void) { lock.withLock { body(self) } }
        var shouldStop: Bool { lock.withLock { stop } }
    }

    func testReadersSeeConsistentSnapshotsWhileWriterCommits() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.checkpointThreshold = 200  // force background checkpoints during the run
        configuration.busyTimeout = 1
        let db = try Database(path: dir.path("bank.db"), configuration: configuration)
        try db.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)")
            for _ in 0..<50 { try db.execute(sql: "INSERT INTO account(balance) VALUES (1000)") }
        }
        let tally = Tally()
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            var random = SeededGenerator(seed: 42)
            let deadline = Date().addingTimeInterval(3)
            while Date() < deadline {
                let from = random.next(upTo: 50) + 1
                let to = random.next(upTo: 50) + 1
                let amount = random.next(upTo: 100)
                do {
                    try db.write { db in
                        try db.execute(sql: "UPDATE account SET balance = balance - ? WHERE id = ?", arguments: [amount, from])
                        // A pause inside the transaction widens the window in which readers could see half of it.
                        if amount % 10 == 0 { usleep(100) }
                        try db.execute(sql: "UPDATE account SET balance = balance + ? WHERE id = ?", arguments: [amount, to])
                    }
                    tally.add { $0.writes += 1 }
                } catch {
                    tally.add { $0.errors.append("write: \(error)") }
                }
            }
            tally.add { $0.stop = true }
        }
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                while !tally.shouldStop {
                    do {
                        let (first, second) = try db.read { db in
                            let first = try db.fetchValue(Int.self, sql: "SELECT sum(balance) FROM account")
                            usleep(50)
                            // Same snapshot inside one read, whatever the writer did meanwhile.
                            let second = try db.fetchValue(Int.self, sql: "SELECT sum(balance) FROM account")
                            return (first, second)
                        }
                        tally.add {
                            $0.reads += 1
                            if first != 50_000 || second != 50_000 { $0.inconsistent += 1 }
                        }
                    } catch {
                        tally.add { $0.errors.append("read: \(error)") }
                    }
                }
            }
        }
        group.wait()
        XCTAssertEqual(tally.errors, [], "no SQLITE_BUSY or other error expected")
        XCTAssertEqual(tally.inconsistent, 0)
        XCTAssertGreaterThan(tally.writes, 100)
        XCTAssertGreaterThan(tally.reads, 100)
    }

    func testAsyncReadsAndWritesRunOffTheCallersThread() async throws {
        let db = try Database.temporary()
        try await db.write { db in try db.execute(sql: "CREATE TABLE t(x INTEGER)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<50 {
                group.addTask { try await db.write { try $0.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) } }
                group.addTask { _ = try await db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") } }
            }
            try await group.waitForAll()
        }
        let count = try await db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }
        XCTAssertEqual(count, 50)
    }
}
