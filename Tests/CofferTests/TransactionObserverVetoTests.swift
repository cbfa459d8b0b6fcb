import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A transaction observer refuses commits by throwing from `willCommit`: the transaction rolls back, the
/// `write` throws that error, and `didRollback` follows.
final class TransactionObserverVetoTests: XCTestCase {
    private struct Refused: Error, Equatable {
        let total: Int
    }

    /// Refuses any commit that leaves the balances' sum other than 100, and records what it heard.
    private final class BalanceGuard: TransactionObserver, @unchecked Sendable {
        private let lock = NSLock()
        private var heard: [String] = []
        var events: [String] { lock.withLock { heard } }

        func willCommit(_ connection: Connection) throws {
            lock.withLock { heard.append("willCommit") }
            let total = try connection.fetchValue(Int.self, sql: "SELECT coalesce(sum(balance), 100) FROM account") ?? 0
            if total != 100 { throw Refused(total: total) }
        }

        func didCommit(_ connection: Connection) { lock.withLock { heard.append("didCommit") } }
        func didRollback(_ connection: Connection) { lock.withLock { heard.append("didRollback") } }
    }

    private func makeDatabase() throws -> (TemporaryDirectory, Database) {
        let directory = try TemporaryDirectory()
        let database = try Database(
            path: directory.path("veto.db"), configuration: Configuration(encryption: .passphrase("veto")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE account(id INTEGER PRIMARY KEY, balance INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO account(balance) VALUES (60), (40)")
        }
        return (directory, database)
    }

    private func balances(_ database: Database) throws -> [Int] {
        try database.read { db in
            try db.fetchAll(sql: "SELECT balance FROM account ORDER BY id").map { try $0.decode(Int.self, at: 0) }
        }
    }

    func testAThrowingObserverRollsTheWriteBackAndItsErrorIsThrown() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let observer = BalanceGuard()
        try database.add(transactionObserver: observer)
        XCTAssertThrowsError(
            try database.write { db in try db.execute(sql: "UPDATE account SET balance = balance + 1 WHERE id = 1") }
        ) {
            XCTAssertEqual($0 as? Refused, Refused(total: 101))
        }
        XCTAssertEqual(try balances(database), [60, 40])
        try database.write { db in
            try db.execute(sql: "UPDATE account SET balance = balance - 10 WHERE id = 1")
            try db.execute(sql: "UPDATE account SET balance = balance + 10 WHERE id = 2")
        }
        XCTAssertEqual(try balances(database), [50, 50])
        XCTAssertEqual(observer.events, ["willCommit", "didRollback", "willCommit", "didCommit"])
    }

    func testAsyncWritesAreVetoedToo() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let observer = BalanceGuard()
        try database.add(transactionObserver: observer)
        do {
            try await database.write { db in try db.execute(sql: "DELETE FROM account WHERE id = 2") }
            XCTFail("the commit was not refused")
        } catch let refused as Refused {
            XCTAssertEqual(refused.total, 60)
        }
        XCTAssertEqual(try balances(database), [60, 40])
    }

    func testSavepointsAreJudgedWithTheirTransaction() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let observer = BalanceGuard()
        try database.add(transactionObserver: observer)
        try database.write { db in
            // A savepoint rolled back alone is no rollback for observers, and its changes are not judged.
            try? db.savepoint {
                try db.execute(sql: "UPDATE account SET balance = 0")
                throw CancellationError()
            }
            try db.savepoint { try db.execute(sql: "UPDATE account SET balance = balance - 5 WHERE id = 1") }
            try db.execute(sql: "UPDATE account SET balance = balance + 5 WHERE id = 2")
        }
        XCTAssertEqual(try balances(database), [55, 45])
        XCTAssertEqual(observer.events, ["willCommit", "didCommit"])
    }

    func testObserversAreKeptWeaklyAndCanBeRemoved() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        var observer: BalanceGuard? = BalanceGuard()
        try database.add(transactionObserver: observer!)
        let kept = BalanceGuard()
        try database.add(transactionObserver: kept)
        try database.remove(transactionObserver: kept)
        observer = nil
        try database.write { db in try db.execute(sql: "UPDATE account SET balance = 1") }
        XCTAssertEqual(try balances(database), [1, 1])
        XCTAssertEqual(kept.events, [])
    }

    func testAnObserverAddedInsideAWriteJudgesThatWrite() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let observer = BalanceGuard()
        XCTAssertThrowsError(
            try database.write { db in
                try database.add(transactionObserver: observer)
                try db.execute(sql: "DELETE FROM account WHERE id = 1")
            })
        XCTAssertEqual(try balances(database), [60, 40])
        XCTAssertEqual(observer.events, ["willCommit", "didRollback"])
    }

    func testObserversSurviveAPassphraseChange() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let observer = BalanceGuard()
        try database.add(transactionObserver: observer)
        try database.changePassphrase(to: .passphrase("veto 2"))
        XCTAssertThrowsError(try database.write { db in try db.execute(sql: "UPDATE account SET balance = 0") })
        XCTAssertEqual(try balances(database), [60, 40])
    }
}
