import Coffer
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

/// Two `Database` objects on one file in this process, and other processes beside them (the `sqlcipher`
/// shell, the `coffer` CLI): no descriptor Coffer opens outside SQLite may be closed while this process's
/// connections hold POSIX locks on the file, or another process's `close()` takes the EXCLUSIVE lock and
/// deletes the WAL under the first database (SQLite's "How To Corrupt An SQLite Database File", §2.2).
/// Linux only: the locks are read from `/proc/locks`.
final class DatabaseSharedFileTests: XCTestCase {
    private static let key = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
    private static let shellKey = "x'" + key.map { String(format: "%02x", $0) }.joined() + "'"

    private func configuration() -> Configuration {
        var configuration = Configuration(encryption: .rawKey(Self.key))
        configuration.externalChangeLatency = 0.05
        return configuration
    }

    /// The locks `database` holds at rest: after a write and a read, with nothing running.
    private func settledLocks(_ database: Database, path: String) throws -> Set<ProcessLocks.Lock> {
        try database.write { try $0.execute(sql: "INSERT INTO note(text) VALUES ('settle')") }
        _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        return ProcessLocks.held(on: path)
    }

    /// The reported scenario: an app's `Database`, a second `Database` on the same file opened, written and
    /// closed in the same process, then another process (the `sqlcipher` 3.4.1 shell) opening, committing and
    /// closing. The first database keeps its locks, the WAL stays, and its reads and writes never fail.
    func testSecondInstanceThenAnotherProcessClosingLeavesTheFirstIntact() throws {
        try XCTSkipUnless(ProcessLocks.isAvailable, "needs /proc/locks")
        let directory = try TemporaryDirectory()
        let path = directory.path("chat.db")
        let app = try Database(path: path, configuration: configuration())
        defer { try? app.close() }
        try app.write { try $0.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)") }
        let baseline = try settledLocks(app, path: path)
        XCTAssertFalse(baseline.isEmpty, "the app's connections hold no lock on \(path): nothing to protect")
        let baselineShm = ProcessLocks.held(on: path + "-shm")

        var failures: [String] = []
        var expected = try app.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") } ?? 0
        for round in 0..<20 {
            let second = try Database(path: path, configuration: configuration())
            try second.write { try $0.execute(sql: "INSERT INTO note(text) VALUES ('second instance')") }
            try second.close()
            expected += 1
            XCTAssertTrue(
                ProcessLocks.held(on: path).isSuperset(of: baseline),
                "round \(round): opening and closing a second Database dropped the app's locks on the file: "
                    + "\(baseline) before, \(ProcessLocks.held(on: path)) after")
            XCTAssertTrue(
                ProcessLocks.held(on: path + "-shm").isSuperset(of: baselineShm),
                "round \(round): the app's locks on the -shm were dropped")

            try Shell.run(
                "sqlcipher", path,
                """
                PRAGMA key = "\(Self.shellKey)";
                PRAGMA cipher_page_size = 4096;
                INSERT INTO note(text) VALUES ('another process');
                """)
            expected += 1
            XCTAssertTrue(
                FileManager.default.fileExists(atPath: path + "-wal"),
                "round \(round): another process's close deleted the -wal while the app has the database open")

            for operation in 0..<20 {
                do {
                    try app.write { try $0.execute(sql: "INSERT INTO note(text) VALUES ('app')") }
                    expected += 1
                    let count = try app.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
                    if count != expected {
                        failures.append("round \(round) op \(operation): \(count ?? -1) rows, not \(expected)")
                    }
                } catch {
                    failures.append("round \(round) op \(operation): \(error)")
                }
            }
        }
        XCTAssertEqual(failures, [], "\(failures.count) failed operations")
        try app.close()
        let check = try Database(path: path, configuration: configuration())
        defer { try? check.close() }
        XCTAssertEqual(try check.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        XCTAssertEqual(try check.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, expected)
    }

    /// Every way Coffer reads an open database's files beside SQLite keeps the process's locks: a second
    /// `Database`, backups (full and incremental: the changed-page tracker reads the WAL after each commit),
    /// `info`, `verify`, statistics, checkpoint metrics (they read the `-shm`), the page cache's purge and
    /// resizing, a rekey. Afterwards, closing the last `Database` leaves no descriptor of the files open.
    func testNoReadBesideSQLiteDropsTheProcesssLocks() throws {
        try XCTSkipUnless(ProcessLocks.isAvailable, "needs /proc/locks")
        let directory = try TemporaryDirectory()
        let path = directory.path("watched.db")
        var configuration = configuration()
        configuration.monitoring.metrics = true
        let database = try Database(path: path, configuration: configuration)
        try database.write { try $0.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)") }
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups, kind: .full)
        let baseline = try settledLocks(database, path: path)
        let baselineShm = ProcessLocks.held(on: path + "-shm")
        XCTAssertFalse(baseline.isEmpty)
        XCTAssertFalse(baselineShm.isEmpty, "no lock on the -shm: SQLite holds its dead-man-switch lock there")

        let operations: [(String, () throws -> Void)] = [
            (
                "a second Database opened, written and closed",
                {
                    let second = try Database(path: path, configuration: self.configuration())
                    try second.write { try $0.execute(sql: "INSERT INTO note(text) VALUES ('second')") }
                    try second.close()
                }
            ),
            ("an incremental backup", { try database.backup(to: backups, kind: .incremental) }),
            ("a full backup", { try database.backup(to: backups, kind: .full) }),
            ("info()", { _ = try database.info() }),
            ("Database.verify on the live file", { _ = try Database.verify(path: path, configuration: self.configuration()) }),
            (
                "statistics of the live file",
                {
                    let file = try DatabaseFile(path: path, key: .rawKey(Self.key), settings: .sqlcipher3)
                    _ = StatisticsCollector.collect(file: file, walPath: path + "-wal")
                }
            ),
            ("a checkpoint with metrics on (reads the -shm)", { try database.checkpoint(.passive) }),
            ("a TRUNCATE checkpoint", { try database.checkpoint(.truncate) }),
            ("the decrypted-page cache purged", { DecryptedPageCache.purge() }),
            (
                "the decrypted-page cache resized",
                {
                    let capacity = DecryptedPageCache.capacityKiB
                    DecryptedPageCache.capacityKiB = 1024
                    _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
                    DecryptedPageCache.capacityKiB = capacity
                }
            ),
        ]
        for (name, operation) in operations {
            try operation()
            try database.write { try $0.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: [name]) }
            XCTAssertTrue(
                ProcessLocks.held(on: path).isSuperset(of: baseline),
                "\(name) dropped the locks on the file: \(baseline) before, \(ProcessLocks.held(on: path)) after")
            XCTAssertTrue(
                ProcessLocks.held(on: path + "-shm").isSuperset(of: baselineShm),
                "\(name) dropped the locks on the -shm: \(baselineShm) before, \(ProcessLocks.held(on: path + "-shm")) after")
        }

        // A rekey reopens every connection; afterwards they hold their locks again, and a second instance
        // opened and closed with the new key still drops none.
        let newKey = Data(repeating: 0x5a, count: 32)
        try database.changePassphrase(to: .rawKey(newKey))
        let rekeyed = try settledLocks(database, path: path)
        XCTAssertFalse(rekeyed.isEmpty)
        var newConfiguration = self.configuration()
        newConfiguration.encryption = .rawKey(newKey)
        let second = try Database(path: path, configuration: newConfiguration)
        try second.close()
        XCTAssertTrue(ProcessLocks.held(on: path).isSuperset(of: rekeyed))

        try database.close()
        XCTAssertEqual(ProcessLocks.held(on: path), [], "locks left after the last close")
        for file in [path, path + "-wal", path + "-shm"] {
            XCTAssertEqual(ProcessLocks.openDescriptors(on: file), 0, "a descriptor of \(file) is still open after close")
        }
    }

    /// The `coffer` CLI's `info`, `verify`, `stats` and `backup` run against a live database from another
    /// process: they fail nothing in the app, delete no WAL, and the app keeps its locks.
    func testCLIInspectionOfALiveDatabaseFromAnotherProcess() throws {
        try XCTSkipUnless(ProcessLocks.isAvailable, "needs /proc/locks")
        let directory = try TemporaryDirectory()
        let path = directory.path("live.db")
        let passphrase = "inspected while open"
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase(passphrase)))
        defer { try? database.close() }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)")
            for index in 0..<200 { try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["n\(index)"]) }
        }
        _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        let baseline = ProcessLocks.held(on: path)
        XCTAssertFalse(baseline.isEmpty)
        let passphraseFile = directory.path("pw")
        try Data(passphrase.utf8).write(to: URL(fileURLWithPath: passphraseFile))
        let commands: [[String]] = [
            ["info", path, "--passphrase-file", passphraseFile],
            ["verify", path, "--passphrase-file", passphraseFile],
            ["stats", path, "--passphrase-file", passphraseFile],
            ["backup", path, "--to", directory.path("cli-backups"), "--passphrase-file", passphraseFile],
        ]
        for arguments in commands {
            let result = try Shell.run(Shell.cofferExecutable, arguments)
            XCTAssertEqual(result.status, 0, "coffer \(arguments[0]): \(result.stderr)")
            XCTAssertTrue(FileManager.default.fileExists(atPath: path + "-wal"), "coffer \(arguments[0]) deleted the -wal")
            XCTAssertTrue(ProcessLocks.held(on: path).isSuperset(of: baseline))
            try database.write { try $0.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: [arguments[0]]) }
        }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 204)
    }
}
