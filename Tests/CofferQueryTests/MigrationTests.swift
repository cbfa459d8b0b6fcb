import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

enum Version3 {
    /// Version 2's note with `text` renamed to `body` and the legacy column dropped.
    @Table("note")
    struct Note: Codable, Equatable {
        @Column(primaryKey: true) var id: Int64?
        var body: String
        var pinned: Bool?
        @Column(default: "inbox") var folder: String
        static var indexes: [TableIndex<Note>] { [TableIndex(columns.folder)] }
    }
}

/// Ordered, recorded, idempotent migrations and the table rebuild helper.
final class MigrationTests: XCTestCase {
    private func migrator(log: LockedLog) -> Migrator {
        var migrator = Migrator()
        migrator.register("v1") { db in
            log.append("v1")
            try db.upgradeSchema(for: [Version1.Note.self])
            var note = Version1.Note(id: nil, text: "first", legacy: 1)
            try note.insert(db)
        }
        migrator.register("v2") { db in
            log.append("v2")
            try db.upgradeSchema(for: [Version2.Note.self])
        }
        migrator.register("v3: rename text to body, drop legacy") { db in
            log.append("v3")
            try db.rebuildTable(Version3.Note.self, renamedColumns: [(Version3.Note.columns.body, from: "text")])
        }
        return migrator
    }

    func testMigrationsRunInOrderOnceAndAreRecorded() throws {
        let database = try makeDatabase()
        let log = LockedLog()
        XCTAssertEqual(try migrator(log: log).migrate(database), ["v1", "v2", "v3: rename text to body, drop legacy"])
        XCTAssertEqual(try migrator(log: log).migrate(database), [], "a second run applies nothing")
        XCTAssertEqual(log.entries, ["v1", "v2", "v3"])
        try database.read { db in
            XCTAssertEqual(try migrator(log: log).appliedMigrations(db), ["v1", "v2", "v3: rename text to body, drop legacy"])
            XCTAssertEqual(try Version3.Note.fetchAll(db), [Version3.Note(id: 1, body: "first", pinned: nil, folder: "inbox")])
            let columns = try db.fetchAll(sql: "PRAGMA table_info(note)").compactMap { $0["name"] as String? }
            XCTAssertEqual(columns, ["id", "body", "pinned", "folder"])
            let indexes = try db.fetchAll(
                sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'note' AND sql IS NOT NULL"
            )
            .compactMap { $0["name"] as String? }
            XCTAssertEqual(indexes, ["note_on_folder"])
        }
    }

    func testAFailingMigrationRollsBackAloneAndStopsTheRun() throws {
        let database = try makeDatabase()
        var migrator = Migrator()
        migrator.register("create") { db in try db.upgradeSchema(for: [Conversation.self]) }
        migrator.register("broken") { db in
            var conversation = Conversation(id: nil, title: "half done", archived: false)
            try conversation.insert(db)
            throw CofferError(code: .apiMisuse, message: "boom")
        }
        migrator.register("never") { _ in XCTFail("runs after a failure") }
        XCTAssertThrowsError(try migrator.migrate(database))
        try database.read { db in
            XCTAssertEqual(try migrator.appliedMigrations(db), ["create"])
            XCTAssertEqual(try Conversation.fetchCount(db), 0)
        }
    }

    func testRebuildingAParentTableKeepsItsChildrenAndChecksForeignKeys() throws {
        let database = try makeDatabase()
        var migrator = Migrator()
        migrator.register("create") { db in
            try db.upgradeSchema(for: [Conversation.self, Message.self])
            var conversation = Conversation(id: nil, title: "kept", archived: false)
            try conversation.insert(db)
            var message = Message(
                id: nil, conversationID: conversation.id ?? 0, body: "child", score: 0, createdAt: referenceDate)
            try message.insert(db)
        }
        migrator.register("rebuild parent") { db in try db.rebuildTable(Conversation.self) }
        try migrator.migrate(database)
        try database.read { db in
            XCTAssertEqual(try Message.fetchCount(db), 1, "no ON DELETE CASCADE fired during the rebuild")
        }

        var breaking = migrator
        breaking.register("orphan") { db in try db.execute(sql: "DELETE FROM conversation") }
        XCTAssertThrowsError(try breaking.migrate(database)) { error in
            XCTAssertEqual((error as? CofferError)?.code.primary, .constraint)
        }
        try database.read { db in
            XCTAssertEqual(try Conversation.fetchCount(db), 1, "the violating migration was rolled back")
            XCTAssertEqual(try db.fetchValue(Bool.self, sql: "PRAGMA foreign_keys"), true)
        }
        try database.write { db in
            XCTAssertEqual(try db.pragmaRows("PRAGMA foreign_keys").first?[0], .integer(1), "enforcement is back on")
        }
    }

    func testDuplicateNamesAreRefused() throws {
        var migrator = Migrator()
        migrator.register("same") { _ in }
        migrator.register("same") { _ in }
        XCTAssertThrowsError(try migrator.migrate(try makeDatabase()))
    }
}

/// A thread-safe list of strings, for migrations to say what ran.
final class LockedLog: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [String] = []
    func append(_ entry: String) { lock.withLock { storage.append(entry) } }
    var entries: [String] { lock.withLock { storage } }
}
