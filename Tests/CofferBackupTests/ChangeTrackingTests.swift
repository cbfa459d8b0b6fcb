import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class ChangeTrackingTests: XCTestCase {
    /// WAL restarts (after complete checkpoints) and truncations (idle TRUNCATE) renumber frames from 1:
    /// the tracker must notice by the new salts and keep every page.
    func testIncrementsSurviveWALRestartsAndTruncation() throws {
        let directory = try TemporaryDirectory()
        var configuration = BackupFixture.configuration()
        configuration.checkpointThreshold = 5
        let database = try Database(path: directory.path("app.db"), configuration: configuration)
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 1000)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        for round in 0..<30 {
            try database.write { db in
                try db.execute(sql: "UPDATE item SET n = n + 1 WHERE id % 30 = ?", arguments: [round])
                try db.execute(sql: "INSERT INTO item(body, n) VALUES ('grown', ?)", arguments: [round])
            }
            if round % 7 == 0 { try database.checkpoint(.truncate) }
            if round % 4 == 0 { try database.checkpoint(.passive) }
        }
        let increment = try database.backup(to: backups)
        XCTAssertEqual(increment.kind, .incremental)
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }

    /// A reader's old snapshot keeps the WAL from being copied completely: the increment waits, then
    /// reports `busy` rather than copying an inconsistent mix, and succeeds once the reader is done.
    func testAnOldReaderSnapshotMakesTheIncrementBusyNotWrong() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 100)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        let snapshotHeld = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        try database.write { db in try db.execute(sql: "UPDATE item SET n = -1 WHERE id = 1") }
        DispatchQueue.global().async {
            _ = try? database.read { db in
                _ = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM item")
                snapshotHeld.signal()
                release.wait()
            }
            readerDone.signal()
        }
        snapshotHeld.wait()
        try database.write { db in try db.execute(sql: "UPDATE item SET n = -2 WHERE id = 2") }
        XCTAssertThrowsError(try database.backup(to: backups, kind: .incremental)) {
            XCTAssertEqual(($0 as? CofferError)?.code, .busy)
        }
        release.signal()
        readerDone.wait()
        let increment = try database.backup(to: backups, kind: .incremental)
        XCTAssertEqual(increment.chain.count, 2)
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }
}

/// The changed-page set survives a clean close, and only an untouched file.
final class ChangeTrackingPersistenceTests: XCTestCase {
    func testFirstBackupAfterReopenIsIncrementalWhenTheFileIsUntouched() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        let backups = directory.url.appendingPathComponent("backups")
        do {
            let database = try Database(path: path, configuration: BackupFixture.configuration())
            try BackupFixture.populate(database, rows: 2000)
            try database.backup(to: backups)
            try database.write { db in try db.execute(sql: "UPDATE item SET n = -n WHERE id < 100") }
            try database.close()
        }
        let database = try Database(path: path, configuration: BackupFixture.configuration())
        defer { try? database.close() }
        let increment = try database.backup(to: backups)
        XCTAssertEqual(increment.kind, .incremental)
        try database.write { db in try db.execute(sql: "DELETE FROM item WHERE id > 1900") }
        XCTAssertEqual(try database.backup(to: backups).kind, .incremental)
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }

    func testAWriteByAnotherProcessWhileClosedForcesAFullBackup() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        let backups = directory.url.appendingPathComponent("backups")
        do {
            let database = try Database(path: path, configuration: BackupFixture.configuration())
            try BackupFixture.populate(database, rows: 500)
            try database.backup(to: backups)
            try database.close()
        }
        let shell = try Shell.sqlcipher(
            path, passphrase: BackupFixture.passphrase, "PRAGMA kdf_iter = 2; UPDATE item SET n = 7 WHERE id = 3;")
        XCTAssertEqual(shell.status, 0, shell.stderr)
        let database = try Database(path: path, configuration: BackupFixture.configuration())
        defer { try? database.close() }
        XCTAssertEqual(try database.backup(to: backups).kind, .full)
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }

    func testACommitBeforeTheFirstBackupForcesAFullBackup() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        let backups = directory.url.appendingPathComponent("backups")
        do {
            let database = try Database(path: path, configuration: BackupFixture.configuration())
            try BackupFixture.populate(database, rows: 500)
            try database.backup(to: backups)
            try database.close()
        }
        let database = try Database(path: path, configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try database.write { db in try db.execute(sql: "UPDATE item SET n = 7 WHERE id = 3") }
        XCTAssertEqual(try database.backup(to: backups).kind, .full)
    }
}
