import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of LiveMigration.md, compiled and run as written.
final class LiveMigrationArticleTests: XCTestCase {
    @Table("message") struct Message: Codable {
        @Column(primaryKey: true) var id: Int64?
        var conversationID: Int64
        var body: String
    }

    /// A plaintext file with `message(id, conversationID, body)`: 300 rows in conversations 0…9.
    private func plainFile(_ directory: TemporaryDirectory) throws -> String {
        let path = directory.path("plain.sqlite")
        let plain = try Database(path: path, configuration: Configuration(encryption: .none))
        try plain.write { db in
            try db.execute(sql: "CREATE TABLE message(id INTEGER PRIMARY KEY, conversationID INTEGER, body TEXT)")
            for id in 1...300 {
                try db.execute(sql: "INSERT INTO message VALUES (?, ?, ?)", arguments: [id, id % 10, "message \(id)"])
            }
        }
        try plain.close()
        return path
    }

    func testDeclaringReadingWritingAndFinishing() throws {
        let directory = try TemporaryDirectory("coffer-docs")
        let plainPath = try plainFile(directory)
        let path = directory.path("app.db")
        let secret = "correct horse battery staple"

        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase(secret)))
        let migration = try database.migrateLive(Message.self, from: .table("message", inFile: plainPath))

        try database.write { db in
            var message = Message(id: nil, conversationID: 7, body: "sent during the migration")
            try message.insert(db)  // its id is above every id still to come from the file
            try Message.filter { $0.conversationID == 3 }.deleteAll(db)  // rows still in the file too
        }
        let count = try database.read { db in try Message.filter { $0.conversationID == 7 }.fetchCount(db) }
        XCTAssertEqual(count, 31)

        migration.pause()  // the union keeps serving reads and writes
        migration.resume()
        try migration.finishNow()  // every remaining batch back to back; returns when the source is gone

        XCTAssertTrue(migration.progress.isFinished)
        XCTAssertEqual(try database.read { db in try Message.all().fetchCount(db) }, 271)
        try database.close()
    }

    func testFollowingProgress() async throws {
        let directory = try TemporaryDirectory("coffer-docs")
        let plainPath = try plainFile(directory)
        let database = try Database(path: directory.path("app.db"), configuration: articleConfiguration)
        let migration = try database.migrateLive(Message.self, from: .table("message", inFile: plainPath))

        for try await event in migration.progressUpdates() {
            if case .progress(let moved, let total) = event { print("\(moved) of \(total) rows") }
        }

        XCTAssertEqual(migration.progress, LiveMigrationProgress(movedRows: 300, totalRows: 300, isFinished: true))
        try database.close()
    }

    func testAnEncryptedSourceFile() throws {
        let directory = try TemporaryDirectory("coffer-docs")
        let oldPath = directory.path("old.db")
        let oldSecret = "the old app's passphrase"
        // A SQLCipher 3 file as the `sqlcipher` 3.4.1 shell writes it (1024-byte pages, PBKDF2-HMAC-SHA1 64,000).
        try Shell.sqlcipher(
            oldPath, key: oldSecret, pageSize: 1024,
            "CREATE TABLE message(id INTEGER PRIMARY KEY, conversationID INTEGER, body TEXT);"
                + "INSERT INTO message VALUES (1, 1, 'hello'), (2, 1, 'again');")
        let database = try Database(path: directory.path("app.db"), configuration: articleConfiguration)

        let migration = try database.migrateLive(
            Message.self, from: .table("message", inFile: oldPath, encryption: .passphrase(oldSecret)))

        try migration.finishNow()
        XCTAssertEqual(try database.read { db in try Message.all().fetchCount(db) }, 2)
        try database.close()
    }

    func testAReshapeInTheSameFile() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try database.write { db in
            try db.execute(
                sql: "CREATE TABLE message_v1(id INTEGER PRIMARY KEY, conversationID INTEGER, text TEXT, deleted INTEGER)")
            try db.execute(sql: "INSERT INTO message_v1 VALUES (1, 1, 'kept', 0), (2, 1, NULL, 0), (3, 1, 'gone', 1)")
        }

        var options = LiveMigrationOptions()
        options.batchSize = 500
        options.filter = "deleted = 0"  // rows that fail it are not part of the table
        options.columnExpressions = ["body": "coalesce(text, '')"]
        try database.migrateLive(Message.self, from: .table("message_v1"), options: options)

        let migration = try database.migrateLive(Message.self, from: .table("message_v1"), options: options)
        try migration.finishNow()
        let bodies = try database.read { db in try Message.order { $0.id.asc }.fetchAll(db).map(\.body) }
        XCTAssertEqual(bodies, ["kept", ""])
        try database.close()
    }
}
