import Coffer
import CofferRepair
import CofferTestSupport
import CofferTestVFS
import Foundation
import XCTest

/// I/O faults at every write point (the test VFS's `coffer_testvfs_fail`, see `CofferTestVFS.h`): for each
/// operation, the write/sync/truncate points it performs are counted, then the operation is repeated once per
/// point N with the N-th one failing — SQLITE_IOERR once (transient), and SQLITE_FULL from N on (a full disk).
/// Every time: a typed ``CofferError`` reaches the caller, the process goes on, and the database reopens
/// (through the real VFS) with integrity_check ok and every commit acknowledged before the fault.
final class FaultInjectionTests: XCTestCase {
    private static let allKinds = Int32(COFFER_TESTVFS_FAULT_WRITE | COFFER_TESTVFS_FAULT_SYNC | COFFER_TESTVFS_FAULT_TRUNCATE)
    /// Fault points exercised by the tests of this class (printed by each test).
    private var exercised = 0

    private func configuration(_ encryption: Encryption = .passphrase("old")) -> Configuration {
        var configuration = Configuration(encryption: encryption, cipher: CipherOptions(keyDerivation: .pbkdf2SHA1(rounds: 2)))
        configuration.readerCount = 0
        configuration.synchronous = .full
        configuration.checkpointThreshold = 1_000_000  // checkpoints only when a test asks: replayable I/O
        configuration.idleCheckpointDelay = 3600
        return configuration
    }

    /// Commits transaction `id` (3 rows) and returns it once acknowledged.
    private func commit(_ database: Database, _ id: Int) throws {
        try database.write { db in
            try db.execute(sql: "INSERT INTO txn(id) VALUES (?)", arguments: [id])
            for seq in 0..<3 {
                try db.execute(
                    sql: "INSERT INTO entry(txn, seq, payload) VALUES (?, ?, ?)",
                    arguments: [id, seq, Data(repeating: UInt8(id & 0xff), count: 700 + 300 * seq)])
            }
        }
    }

    private func prepare(_ path: String) throws -> Database {
        let database = try Database(path: path, configuration: configuration())
        try database.write { db in
            try db.execute(sql: "CREATE TABLE txn(id INTEGER PRIMARY KEY)")
            try db.execute(
                sql: "CREATE TABLE entry(txn INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB, PRIMARY KEY(txn, seq))")
        }
        for id in 1...5 { try commit(database, id) }
        return database
    }

    /// Reopens through the real VFS with the first of `keys` that reads it; checks integrity and that
    /// transactions `1...acknowledged` are whole (and nothing but whole transactions is there).
    private func assertIntact(
        _ path: String, acknowledged: Int, keys: [Encryption] = [.passphrase("old")],
        _ label: String, file: StaticString = #filePath, line: UInt = #line
    ) {
        var problems: [String] = []
        for key in keys {
            do {
                let database = try Database(path: path, configuration: configuration(key))
                defer { try? database.close() }
                let integrity = try database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }
                guard integrity == "ok" else {
                    problems.append("\(key): integrity_check: \(integrity ?? "nil")")
                    continue
                }
                let ids =
                    try database.read {
                        try $0.fetchValue(String.self, sql: "SELECT group_concat(id) FROM (SELECT id FROM txn ORDER BY id)")
                    } ?? ""
                let expected = (1...acknowledged).map(String.init).joined(separator: ",")
                XCTAssertTrue(
                    ids == expected || ids.hasPrefix(expected + ","),
                    "\(label): acknowledged \(acknowledged), found \(ids)", file: file, line: line)
                let partial = try database.read {
                    try $0.fetchValue(
                        Int.self, sql: "SELECT count(*) FROM txn WHERE (SELECT count(*) FROM entry WHERE txn = id) != 3")
                }
                XCTAssertEqual(partial, 0, "\(label): a partial transaction is visible", file: file, line: line)
                return
            } catch {
                problems.append("\(key): \(error)")
            }
        }
        XCTFail("\(label): the database does not reopen whole with any key: \(problems)", file: file, line: line)
    }

    /// Runs `operation` once per fault point; `operation` returns the number of acknowledged transactions.
    private func everyFaultPoint(
        _ name: String, fullDiskOnly: Bool = false, setUp: (Database, TemporaryDirectory) throws -> Void = { _, _ in },
        keys: [Encryption] = [.passphrase("old")],
        check: (TemporaryDirectory, _ failed: Bool, String) throws -> Void = { _, _, _ in },
        _ operation: (Database, TemporaryDirectory) throws -> Int
    ) throws {
        var points = 0
        var n = 0
        var fired = 0
        for full in fullDiskOnly ? [true] : [false, true] {
            n = 0
            repeat {
                n += 1
                let dir = try TemporaryDirectory()
                let path = dir.path("fault.db")
                XCTAssertEqual(coffer_testvfs_register(1), 0)
                var acknowledged = 5
                var failed = false
                var lastPoint = false
                do {
                    let database = try prepare(path)
                    try setUp(database, dir)
                    coffer_testvfs_fail(Self.allKinds, Int64(n), full ? 1 : 0, full ? 1 : 0)
                    do {
                        acknowledged = try operation(database, dir)
                    } catch let error as CofferError {
                        failed = true
                        if ProcessInfo.processInfo.environment["COFFER_FAULT_VERBOSE"] != nil {
                            print("\(name) N=\(n): \(error)")
                        }
                    } catch {
                        XCTFail("\(name) N=\(n): untyped error \(type(of: error)): \(error)")
                    }
                    let seen = coffer_testvfs_fault_operations_seen()
                    fired += Int(coffer_testvfs_faults_fired())
                    lastPoint = seen < n
                    if points == 0, lastPoint { points = n - 1 }
                    coffer_testvfs_fail(0, 0, 0, 0)
                    try? database.close()
                }
                XCTAssertEqual(coffer_testvfs_unregister(), 0)
                if lastPoint { XCTAssertFalse(failed, "\(name) N=\(n): failed with no fault injected") }
                let label = "\(name) \(full ? "FULL" : "IOERR") at point \(n)"
                try? FileManager.default.removeItem(atPath: path + "-shm")
                assertIntact(path, acknowledged: acknowledged, keys: keys, label)
                try check(dir, failed, label)
                if lastPoint || (testRun?.failureCount ?? 0 > 0 && ProcessInfo.processInfo.environment["COFFER_FAULT_ALL"] == nil)
                {
                    break
                }
            } while n < 400
        }
        XCTAssertGreaterThan(points, 0, "\(name): no write point counted")
        exercised += 2 * points
        let modes = fullDiskOnly ? "FULL from then on" : "IOERR once, FULL from then on"
        print("faults, \(name): \(points) write/sync/truncate points × {\(modes)}, \(fired) faults fired")
    }

    func testEveryFaultPointOfATransaction() throws {
        try everyFaultPoint("transaction") { database, _ in
            try commit(database, 6)
            return 6
        }
    }

    func testEveryFaultPointOfACheckpoint() throws {
        try everyFaultPoint("checkpoint") { database, _ in
            try database.checkpoint(.truncate)
            return 5
        }
    }

    /// A full disk (every write from the N-th on fails) during a rekey leaves the old key working.
    func testEveryFaultPointOfARekeyOnAFullDisk() throws {
        try everyFaultPoint("rekey", fullDiskOnly: true, keys: [.passphrase("old"), .passphrase("new")]) { database, _ in
            try database.changePassphrase(to: .passphrase("new"))
            return 5
        }
    }

    /// A transient SQLITE_IOERR at any point of a rekey leaves the database whole under exactly one of the
    /// keys. SQLCipher 3.4.1's `sqlite3_rekey` ignores the result of its own commit and switches the
    /// connection to the new key anyway (this test found it: points 23–50 of 72 left a file neither key
    /// opened), so `changePassphrase` proves the outcome on a fresh writer and falls back to the old key.
    func testEveryFaultPointOfARekeyWithATransientError() throws {
        try everyFaultPoint("rekey", keys: [.passphrase("old"), .passphrase("new")]) { database, _ in
            try database.changePassphrase(to: .passphrase("new"))
            return 5
        }
    }

    func testEveryFaultPointOfABackupKeepsThePreviousGeneration() throws {
        try everyFaultPoint(
            "backup",
            setUp: { database, dir in
                try database.backup(to: dir.url.appendingPathComponent("backups"), kind: .full)
                try self.commit(database, 6)
            },
            check: { dir, failed, label in
                let generations = try Database.backupGenerations(in: dir.url.appendingPathComponent("backups"))
                XCTAssertEqual(generations.count, failed ? 1 : 2, label)
                let restored = dir.path("restored.db")
                _ = try Database.restore(
                    from: dir.url.appendingPathComponent("backups"), to: restored, configuration: self.configuration())
                self.assertIntact(restored, acknowledged: 5, "\(label), restored")
            }
        ) { database, dir in
            try database.backup(to: dir.url.appendingPathComponent("backups"), kind: .full)
            return 6
        }
    }

    func testEveryFaultPointOfARepairOutput() throws {
        try everyFaultPoint("repair output") { database, dir in
            try database.checkpoint(.truncate)
            let output = dir.path("repaired.db")
            var settings = CipherSettings.sqlcipher3
            settings.kdfRounds = 2
            let salvager = try Salvager(path: dir.path("fault.db"), key: .passphrase("old"), settings: settings)
            var writer = try RepairWriter(
                path: output, encryption: .passphrase("new"), cipher: CipherOptions(keyDerivation: .pbkdf2SHA1(rounds: 2)))
            _ = try salvager.run(into: &writer)
            try writer.close()
            return 5
        }
    }
}
