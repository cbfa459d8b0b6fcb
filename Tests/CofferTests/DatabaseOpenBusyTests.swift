import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Opening a database while another process holds its lock waits up to `busyTimeout`, like every
/// other statement, instead of failing at the open's first read.
final class DatabaseOpenBusyTests: XCTestCase {
    func testOpenWaitsForAnotherProcessesExclusiveLock() throws {
        for encrypted in [false, true] {
            let dir = try TemporaryDirectory()
            let path = try makeRollbackJournalFile(in: dir, encrypted: encrypted)
            let holder = try lockedShell(path, encrypted: encrypted)
            // The other process holds the lock for about a second, then commits.
            let released = Date().addingTimeInterval(1)
            DispatchQueue.global().asyncAfter(deadline: .now() + 1) { try? holder.send("COMMIT;") }
            var configuration = configuration(encrypted: encrypted)
            configuration.busyTimeout = 5
            let database = try Database(path: path, configuration: configuration)
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(released), -0.05, "opened while the lock was held")
            XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 1)
            try database.close()
            try holder.finish()
        }
    }

    func testOpenThrowsBusyAfterAShortTimeout() throws {
        for encrypted in [false, true] {
            let dir = try TemporaryDirectory()
            let path = try makeRollbackJournalFile(in: dir, encrypted: encrypted)
            let holder = try lockedShell(path, encrypted: encrypted)
            var configuration = configuration(encrypted: encrypted)
            configuration.busyTimeout = 0.2
            let start = Date()
            XCTAssertThrowsError(try Database(path: path, configuration: configuration)) { error in
                XCTAssertEqual((error as? CofferError)?.code.primary, .busy, "\(error)")
            }
            XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.15, "did not wait for the timeout")
            try holder.send("COMMIT;")
            try holder.finish()
        }
    }

    private func configuration(encrypted: Bool) -> Configuration {
        Configuration(encryption: encrypted ? .passphrase("pw") : .none)
    }

    /// A file in rollback-journal mode written by the independent shell, so an exclusive lock blocks readers.
    private func makeRollbackJournalFile(in dir: TemporaryDirectory, encrypted: Bool) throws -> String {
        let path = dir.path("locked.db")
        let sql = "CREATE TABLE t(x); INSERT INTO t VALUES (1);"
        if encrypted { try Shell.sqlcipher(path, sql) } else { try Shell.run("sqlite3", path, sql) }
        return path
    }

    /// A shell process that has taken the file's exclusive lock (it printed `locked` after BEGIN EXCLUSIVE).
    private func lockedShell(_ path: String, encrypted: Bool) throws -> ShellSession {
        let holder = try ShellSession(encrypted ? "sqlcipher" : "sqlite3", path)
        if encrypted { try holder.send("PRAGMA key = 'pw'; PRAGMA cipher_page_size = 4096;") }
        try holder.send("BEGIN EXCLUSIVE; SELECT count(*) FROM t; SELECT 'locked';")
        try holder.waitForLine("locked")
        return holder
    }
}
