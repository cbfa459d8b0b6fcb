import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class BackupSchedulerTests: XCTestCase {
    func testSchedulerWritesAFullThenIncrementsAfterChangedPagesAndPrunes() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 200)
        var backups = BackupConfiguration(directory: directory.url.appendingPathComponent("backups"))
        backups.interval = nil
        backups.changedPagesThreshold = 3
        backups.pollInterval = 0.01
        backups.incrementsPerChain = 2
        backups.generationsToKeep = 2
        let scheduler = BackupScheduler(database: database, configuration: backups)
        let written = DispatchSemaphore(value: 0)
        scheduler.observe { status in if status.lastError == nil { written.signal() } }
        scheduler.start()
        for round in 0..<8 {
            XCTAssertEqual(written.wait(timeout: .now() + 30), .success, "backup \(round) never came")
            try database.write { db in
                try db.execute(
                    sql: "UPDATE item SET body = ? WHERE id % 20 = ?", arguments: [String(repeating: "u", count: 220), round])
            }
        }
        scheduler.stop()
        // The last update came after the last scheduled backup: take one more, on demand.
        let last = try scheduler.backupNow()
        let status = scheduler.status
        XCTAssertFalse(status.isRunning)
        XCTAssertNil(status.lastError)
        XCTAssertEqual(status.lastGeneration, last)
        XCTAssertGreaterThanOrEqual(status.backupsWritten, 8)
        let generations = try Database.backupGenerations(in: backups.directory)
        XCTAssertEqual(Set(generations.map(\.baseID)).count, 2, "two chains kept")
        XCTAssertTrue(generations.allSatisfy { $0.chain.count <= 3 })
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups.directory, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }

    func testFailuresAreObservableAndNeverThrowIntoTheApp() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 10)
        // A file where the backup directory should be: every attempt fails.
        let blocked = directory.url.appendingPathComponent("blocked")
        try Data("not a directory".utf8).write(to: blocked)
        var backups = BackupConfiguration(directory: blocked)
        backups.interval = 3600
        let scheduler = BackupScheduler(database: database, configuration: backups)
        let attempted = DispatchSemaphore(value: 0)
        scheduler.observe { _ in attempted.signal() }
        scheduler.start()
        XCTAssertEqual(attempted.wait(timeout: .now() + 30), .success)
        scheduler.stop()
        XCTAssertNotNil(scheduler.status.lastError)
        XCTAssertEqual(scheduler.status.backupsWritten, 0)
    }

    func testCorruptionHandlerHealsFromTheLatestBackupAtNextLaunch() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        let backups = directory.url.appendingPathComponent("backups")
        var configuration = BackupFixture.configuration()
        let flag = directory.path("restore-at-launch")
        configuration.onCorruption = { _ in _ = FileManager.default.createFile(atPath: flag, contents: Data()) }
        do {
            let database = try Database(path: path, configuration: configuration)
            try BackupFixture.populate(database, rows: 2000)
            try database.backup(to: backups)
            try database.close()
        }
        let expected = try BackupFixture.dump(path: path)
        // Damage a leaf in the middle of the table.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(4096 * 40 + 64))
        handle.write(Data(repeating: 0xa5, count: 32))
        try handle.close()

        let damaged = try Database(path: path, configuration: configuration)
        XCTAssertThrowsError(try BackupFixture.dump(damaged))
        XCTAssertTrue(FileManager.default.fileExists(atPath: flag), "the handler ran")
        try damaged.restore(fromLatestBackup: backups)
        XCTAssertEqual(try BackupFixture.dump(path: path), expected)
        XCTAssertTrue(try Database.verify(path: path, configuration: configuration).isClean)
    }
}
