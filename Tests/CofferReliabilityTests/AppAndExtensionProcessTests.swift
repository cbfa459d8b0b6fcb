import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// An app and its extension: this process (the app, with a second `Database` on the same file opened and
/// closed now and then, and its own `Database` closed and reopened) and `coffer-torture` children (the
/// extension) writing the same encrypted file in turns and at once, closing in any order or killed with
/// SIGKILL at a random moment. Seeded: `COFFER_PROCESS_ROUNDS` (default 24) and `COFFER_PROCESS_SEED`
/// (default 37) repeat a run.
///
/// After every round: no operation of the app failed, every commit either side acknowledged is there whole,
/// the `-wal` exists and the app holds its locks while the app has the file open, and the app's observation
/// of the children's table has seen the last commit. At the end, `integrity_check` is ok.
final class AppAndExtensionProcessTests: XCTestCase {
    private static let passphrase = "app and extension"

    private func configuration() -> Configuration {
        var configuration = Configuration(encryption: .passphrase(Self.passphrase))
        // The children's derivation (`coffer-torture --kdf-iter`): cheap, so a round costs a process start.
        configuration.cipher.keyDerivation = .pbkdf2SHA1(rounds: 1000)
        configuration.externalChangeLatency = 0.02
        return configuration
    }

    /// What one round does.
    private struct Round: CustomStringConvertible {
        var childTransactions: Int
        /// Kill the child after this many acknowledged commits (nil: it finishes and closes).
        var killAfter: Int?
        var appWrites: Int
        var secondInstance: Bool
        var reopenApp: Bool

        init(using generator: inout SeededGenerator) {
            childTransactions = Int.random(in: 1...6, using: &generator)
            killAfter = Bool.random(using: &generator) ? Int.random(in: 0...childTransactions, using: &generator) : nil
            appWrites = Int.random(in: 0...4, using: &generator)
            secondInstance = Int.random(in: 0..<3, using: &generator) == 0
            reopenApp = Int.random(in: 0..<6, using: &generator) == 0
        }

        var description: String {
            "child \(childTransactions) txn\(killAfter.map { ", kill -9 after \($0) acks" } ?? ", closes"), app \(appWrites) writes"
                + (secondInstance ? ", second instance" : "") + (reopenApp ? ", app reopens" : "")
        }
    }

    /// The newest value an observation delivered, and a wait for a value.
    private final class Observed: @unchecked Sendable {
        private let condition = NSCondition()
        private var value = -1

        func set(_ newValue: Int) {
            condition.withLock {
                value = newValue
                condition.broadcast()
            }
        }

        /// Waits up to `timeout` seconds for `expected`; returns the last value seen.
        func wait(for expected: Int, timeout: TimeInterval) -> Int {
            let deadline = Date(timeIntervalSinceNow: timeout)
            return condition.withLock {
                while value != expected && condition.wait(until: deadline) {}
                return value
            }
        }
    }

    /// Lines and acknowledged transactions of a child, collected off the test's thread.
    private final class Acks: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [Int] = []
        func append(_ id: Int) { lock.withLock { ids.append(id) } }
        var all: [Int] { lock.withLock { ids } }
    }

    func testAppAndExtensionWriteCloseAndDieInAnyOrder() throws {
        try XCTSkipUnless(ProcessLocks.isAvailable, "needs /proc/locks")
        let environment = ProcessInfo.processInfo.environment
        let rounds = environment["COFFER_PROCESS_ROUNDS"].flatMap(Int.init) ?? 24
        let seed = environment["COFFER_PROCESS_SEED"].flatMap(UInt64.init) ?? 37
        var generator = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.db")

        var app: Database? = try Database(path: path, configuration: configuration())
        try app?.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS txn(id INTEGER PRIMARY KEY, rows INTEGER NOT NULL)")
            try db.execute(
                sql:
                    "CREATE TABLE IF NOT EXISTS entry(txn INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB, PRIMARY KEY(txn, seq))"
            )
            try db.execute(sql: "CREATE TABLE app_log(id INTEGER PRIMARY KEY, round INTEGER NOT NULL)")
        }
        var appAcked = 0
        var childAcked: Set<Int> = []
        var failures: [String] = []
        var kills = 0
        let observed = Observed()
        var observation: ObservationHandle?
        var baseline: Set<ProcessLocks.Lock> = []
        let start = { (database: Database) throws in
            _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM txn") }
            baseline = ProcessLocks.held(on: path)
            observation = database.observe(
                on: DispatchQueue(label: "app-observation"),
                { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM txn") ?? 0 },
                onChange: { observed.set($0) })
        }
        if let app { try start(app) }

        for number in 0..<rounds {
            let round = Round(using: &generator)
            let acks = Acks()
            let childDone = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var childEnd: Result<ChildKill.End, any Error>?
            DispatchQueue.global().async {
                childEnd = Result {
                    try ChildKill.run(
                        executable: Shell.tortureExecutable,
                        arguments: [
                            path, "--count", "\(round.childTransactions)", "--passphrase-env", "COFFER_APP_PW", "--kdf-iter",
                            "1000",
                        ],
                        environment: ["COFFER_APP_PW": Self.passphrase]
                    ) { line in
                        guard line.hasPrefix("ack "), let id = Int(line.dropFirst(4)) else { return false }
                        acks.append(id)
                        return round.killAfter.map { acks.all.count >= $0 } ?? false
                    }
                }
                childDone.signal()
            }
            if let database = app {
                for _ in 0..<round.appWrites {
                    do {
                        try database.write { try $0.execute(sql: "INSERT INTO app_log(round) VALUES (?)", arguments: [number]) }
                        appAcked += 1
                    } catch {
                        failures.append("round \(number) (\(round)): app write: \(error)")
                    }
                }
            }
            if round.secondInstance {
                do {
                    let second = try Database(path: path, configuration: configuration())
                    try second.write { try $0.execute(sql: "INSERT INTO app_log(round) VALUES (?)", arguments: [-number]) }
                    appAcked += 1
                    try second.close()
                } catch {
                    failures.append("round \(number) (\(round)): second instance: \(error)")
                }
            }
            childDone.wait()
            switch childEnd {
            case .success(let end): if end.killed { kills += 1 }
            case .failure(let error): failures.append("round \(number): child did not run: \(error)")
            case nil: failures.append("round \(number): child did not run")
            }
            childAcked.formUnion(acks.all)

            if let database = app {
                if !FileManager.default.fileExists(atPath: path + "-wal") {
                    failures.append("round \(number) (\(round)): the -wal is gone while the app has the file open")
                }
                if !ProcessLocks.held(on: path).isSuperset(of: baseline) {
                    failures.append("round \(number) (\(round)): the app lost its locks: \(ProcessLocks.held(on: path))")
                }
                do {
                    let (transactions, whole, logged) = try database.read { db in
                        (
                            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM txn") ?? -1,
                            try db.fetchValue(
                                Int.self,
                                sql: "SELECT count(*) FROM txn WHERE rows = (SELECT count(*) FROM entry WHERE entry.txn = txn.id)"
                            ) ?? -1,
                            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM app_log") ?? -1
                        )
                    }
                    let present = Set(
                        try database.read { try $0.fetchAll(sql: "SELECT id FROM txn").map { try $0.decode(Int.self, at: 0) } })
                    if !childAcked.isSubset(of: present) {
                        failures.append(
                            "round \(number) (\(round)): acknowledged \(childAcked.subtracting(present).sorted()) missing")
                    }
                    if whole != transactions { failures.append("round \(number): \(transactions - whole) partial transactions") }
                    if logged != appAcked { failures.append("round \(number): \(logged) app rows, \(appAcked) acknowledged") }
                    let seen = observed.wait(for: transactions, timeout: 5)
                    if seen != transactions {
                        failures.append(
                            "round \(number) (\(round)): observation shows \(seen) transactions, the file \(transactions)")
                    }
                } catch {
                    failures.append("round \(number) (\(round)): app read: \(error)")
                }
            }
            if round.reopenApp {
                observation?.cancel()
                if let database = app {
                    try database.close()
                    app = nil
                } else {
                    let database = try Database(path: path, configuration: configuration())
                    try start(database)
                    app = database
                }
            }
        }
        observation?.cancel()
        try app?.close()
        XCTAssertGreaterThan(childAcked.count, rounds, "the children acknowledged too few commits to test anything")
        XCTAssertGreaterThan(kills, 0, "no child was killed")
        XCTAssertEqual(failures, [], "\(failures.count) failures with seed \(seed) over \(rounds) rounds")

        let check = try Database(path: path, configuration: configuration())
        defer { try? check.close() }
        XCTAssertEqual(try check.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        let present = Set(try check.read { try $0.fetchAll(sql: "SELECT id FROM txn").map { try $0.decode(Int.self, at: 0) } })
        XCTAssertTrue(childAcked.isSubset(of: present), "acknowledged and lost: \(childAcked.subtracting(present).sorted())")
        XCTAssertEqual(try check.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM app_log") }, appAcked)
    }
}
