import InMemoryLogging
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Version 1 and 2 of one table, as an app would ship them.
enum Version1 {
    @Table("note")
    struct Note: Codable {
        @Column(primaryKey: true) var id: Int64?
        var text: String
        var legacy: Int?
        static var indexes: [TableIndex<Note>] { [TableIndex(columns.legacy, name: "note_legacy")] }
    }
}

enum Version2 {
    @Table("note")
    struct Note: Codable, Equatable {
        @Column(primaryKey: true) var id: Int64?
        var text: String
        var pinned: Bool?
        @Column(default: "inbox") var folder: String
        static var indexes: [TableIndex<Note>] {
            [TableIndex(columns.folder, columns.pinned), TableIndex(columns.text, unique: true)]
        }
    }

    @Table("note")
    struct BrokenNote: Codable {
        @Column(primaryKey: true) var id: Int64?
        var text: String
        var required: Int
    }
}

/// Schema upgrade on first use: created tables, added columns, index reconciliation, reported leftovers.
final class SchemaUpgradeTests: XCTestCase {
    func testCreatesMissingTablesAndIsIdempotent() throws {
        let database = try makeDatabase()
        let first = try database.write { db in try db.upgradeSchema(for: [Conversation.self, Message.self]) }
        XCTAssertEqual(first.createdTables, ["conversation", "message"])
        XCTAssertEqual(first.createdIndexes, ["message_on_conversationID_createdAt"])
        let second = try database.write { db in try db.upgradeSchema(for: [Conversation.self, Message.self]) }
        XCTAssertEqual(second, SchemaUpgradeReport())
    }

    func testAddsColumnsReconcilesIndexesAndReportsUndeclaredColumns() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Version1.Note.self])
            var note = Version1.Note(id: nil, text: "kept", legacy: 7)
            try note.insert(db)
        }
        let report = try database.write { db in try db.upgradeSchema(for: [Version2.Note.self]) }
        XCTAssertEqual(report.addedColumns, ["note.pinned", "note.folder"])
        XCTAssertEqual(report.droppedIndexes, ["note_legacy"])
        XCTAssertEqual(Set(report.createdIndexes), ["note_on_folder_pinned", "note_on_text"])
        XCTAssertEqual(report.undeclaredColumns, ["note.legacy"])
        try database.read { db in
            XCTAssertEqual(try Version2.Note.fetchAll(db), [Version2.Note(id: 1, text: "kept", pinned: nil, folder: "inbox")])
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT legacy FROM note"), 7, "undeclared columns are left alone")
            let indexes = try db.fetchAll(
                sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY name"
            )
            .compactMap { $0["name"] as String? }
            XCTAssertEqual(indexes, ["note_on_folder_pinned", "note_on_text"])
        }
    }

    func testAddingANotNullColumnWithoutDefaultFailsAtomically() throws {
        let database = try makeDatabase()
        try database.write { db in _ = try db.upgradeSchema(for: [Version1.Note.self]) }
        XCTAssertThrowsError(
            try database.write { db in try db.upgradeSchema(for: [Conversation.self, Version2.BrokenNote.self]) })
        try database.read { db in
            XCTAssertEqual(try db.columnNames(of: "conversation"), [], "nothing of a failed upgrade remains")
        }
    }

    func testUndeclaredColumnsAreLogged() throws {
        let log = InMemoryLogHandler()
        var configuration = Configuration()
        configuration.logger = log.logger(level: .warning)
        let database = try Database.temporary(configuration: configuration)
        try database.write { db in _ = try db.upgradeSchema(for: [Version1.Note.self]) }
        try database.write { db in _ = try db.upgradeSchema(for: [Version2.Note.self]) }
        XCTAssertTrue(
            log.entries.contains { "\($0.message)".contains("not in its type") && "\($0.metadata)".contains("note.legacy") },
            "\(log.entries)")
    }
}
