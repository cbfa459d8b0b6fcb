import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of Backups.md, compiled and run as written (the overview's restore goes to another
/// file here).
final class BackupsArticleTests: InTemporaryDirectoryTestCase {
    func testOverview() throws {
        let configuration = Configuration(encryption: .passphrase("correct horse battery staple"))
        let database = try Database(path: "app.db", configuration: configuration)
        try database.write { db in try db.executeScript("CREATE TABLE note(text); INSERT INTO note VALUES ('hello');") }
        let path = "restored.db"

        let backupsURL = URL(fileURLWithPath: "backups")
        var backups = BackupConfiguration(directory: backupsURL)
        backups.interval = 600
        backups.changedPagesThreshold = 2000
        let scheduler = BackupScheduler(database: database, configuration: backups)
        scheduler.start()

        // Or on demand:
        try database.backup(to: backupsURL)

        // At the next launch after `onCorruption` fired:
        try Database.restore(from: backupsURL, to: path, configuration: configuration, replacingExisting: true)

        scheduler.stop()
        try database.close()
        let restored = try Database(path: path, configuration: configuration)
        XCTAssertEqual(try restored.read { try $0.fetchValue(String.self, sql: "SELECT text FROM note") }, "hello")
        try restored.close()
    }

    func testInBrief() throws {
        let configuration = Configuration(encryption: .passphrase("correct horse battery staple"))
        let database = try Database(path: "app.db", configuration: configuration)
        try database.write { db in try db.executeScript("CREATE TABLE note(text); INSERT INTO note VALUES ('hello');") }
        let backupsURL = URL(fileURLWithPath: "backups")

        var backups = BackupConfiguration(directory: URL(fileURLWithPath: "backups"))
        backups.interval = 600  // and/or after N changed pages: backups.changedPagesThreshold
        let scheduler = BackupScheduler(database: database, configuration: backups)
        scheduler.start()  // status and last error: scheduler.status

        try database.backup(to: backupsURL)  // now; .automatic picks incremental when a base exists
        try database.restore(fromLatestBackup: backupsURL)  // e.g. at the launch after onCorruption fired

        scheduler.stop()
        XCTAssertFalse(try Database.backupGenerations(in: backupsURL).isEmpty)
        let restored = try Database(path: "app.db", configuration: configuration)
        XCTAssertEqual(try restored.read { try $0.fetchValue(String.self, sql: "SELECT text FROM note") }, "hello")
        try restored.close()
    }

    func testVerifyingAFile() throws {
        let configuration = Configuration(encryption: .passphrase("correct horse battery staple"))
        let database = try Database(path: "app.db", configuration: configuration)
        try database.write { db in
            try db.executeScript("CREATE TABLE note(text); CREATE INDEX note_text ON note(text); INSERT INTO note VALUES ('a');")
        }
        try database.close()

        let report = try Database.verify(path: "app.db", configuration: configuration)
        let quick = try Database.verify(path: "app.db", configuration: configuration, depth: .quick)
        if !report.isClean || !quick.isClean { print(report.damagedPages, report.integrityErrors.prefix(5)) }

        XCTAssertTrue(report.isClean)
        XCTAssertTrue(quick.isClean)
        XCTAssertEqual(quick.pageCount, report.pageCount)
    }
}
