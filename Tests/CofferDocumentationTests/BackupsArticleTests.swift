import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift block of Backups.md, compiled and run as written (the restore goes to another file here).
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
}
