import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer

/// A post the app now searches, filled by a live migration from `post_v1` of a plaintext file.
@Table("post")
struct MigratingPost: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
}

extension MigratingPost: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<MigratingPost>(columns.body)
}

/// A note keyed by a `PRIMARY KEY(id)` table constraint on an INTEGER column: SQLite's rowid alias too.
@Table("note")
struct MigratingNote: Codable, Equatable {
    var id: Int64
    var body: String
    static var constraints: [TableConstraint<MigratingNote>] { [.primaryKey(columns.id)] }
}

extension MigratingNote: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<MigratingNote>(columns.body)
}

/// A table with a full-text index migrating live: the index holds the rows in the table itself — those
/// moved so far and those the app wrote — so a search during the migration finds those and not the source
/// rows still to move; every typed write keeps the index exact (a deleted source row is never found, an
/// updated one is found by its new text only), and once the migration ends a search finds every row.
final class LiveMigrationFullTextTests: XCTestCase {
    func testSearchFindsMovedRowsDuringTheMigrationAndEveryRowAfter() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("plain.sqlite")
        try Shell.run(
            "sqlite3", source,
            """
            CREATE TABLE post_v1(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
            INSERT INTO post_v1 SELECT i, CASE WHEN i % 3 = 0 THEN 'hotpot ' || i ELSE 'noodles ' || i END FROM c;
            """)
        let database = try Database(path: directory.path("app.db"), configuration: Configuration(encryption: .none))
        _ = try database.write { db in try db.upgradeSchema(for: [MigratingPost.self]) }
        var options = LiveMigrationOptions()
        options.batchSize = 30
        // The pause below lands after the first batch or two.
        options.pauseBetweenBatches = 0.2
        let migration = try database.migrateLive(MigratingPost.self, from: .table("post_v1", inFile: source), options: options)
        migration.pause()
        func hotpot() throws -> Set<Int64> {
            try database.read { db in Set(try MigratingPost.search(.searchBox("hotpot")).fetchAll(db).compactMap(\.record.id)) }
        }
        let moved = try database.read { try $0.fetchValue(Int64.self, sql: "SELECT coalesce(max(id), 0) FROM main.post") } ?? 0
        XCTAssertLessThan(moved, 300)
        // Only the rows already in the table are found.
        XCTAssertEqual(try hotpot(), Set(stride(from: Int64(3), through: moved, by: 3)))

        try database.write { db in
            // Rows still in the source: a delete, an update to new text, an update away from the term.
            XCTAssertEqual(try MigratingPost.filter { $0.id == 297 }.deleteAll(db), 1)
            let renamed = MigratingPost(id: 298, body: "hotpot renamed")
            XCTAssertTrue(try renamed.update(db))
            let away = MigratingPost(id: 294, body: "rice")
            XCTAssertTrue(try away.update(db))
            var added = MigratingPost(id: nil, body: "hotpot added")
            try added.insert(db)
        }
        // The rows in the table now: those moved before, those the writes moved (the insert that let SQLite
        // choose its key moved the largest source key first, 300), and the new row.
        var inTable = Set(stride(from: Int64(3), through: moved, by: 3))
        inTable.formUnion([298, 300, 301])
        inTable.subtract([294, 297])
        let during = try hotpot()
        XCTAssertEqual(during, inTable)
        // A query driven by the index's hits reads the same rows.
        let matched = try database.read { db in
            Set(try MigratingPost.matching(.searchBox("hotpot")).fetchAll(db).compactMap(\.id))
        }
        XCTAssertEqual(matched, during)
        // And the filter form, `rowid IN (hits)` as an expression.
        let filtered = try database.read { db in
            Set(try MigratingPost.filter { _ in MigratingPost.matches(.searchBox("hotpot")) }.fetchAll(db).compactMap(\.id))
        }
        XCTAssertEqual(filtered, during)
        // A delete of the hits reaches exactly them; the index loses them.
        try database.write { db in XCTAssertEqual(try MigratingPost.matching(.searchBox("added")).deleteAll(db), 1) }
        XCTAssertNil(try database.read { db in try MigratingPost.filter { $0.id == 301 }.fetchOne(db) })
        try database.write { db in
            var added = MigratingPost(id: 301, body: "hotpot added")
            try added.insert(db)
        }

        try migration.finishNow()
        var expected = Set(stride(from: Int64(3), through: 300, by: 3))
        expected.subtract([294, 297])
        expected.formUnion([298, 301])
        XCTAssertEqual(try hotpot(), expected)
        try database.read { db in
            XCTAssertEqual(try db.fetchValue(String.self, sql: "SELECT body FROM post WHERE id = 298"), "hotpot renamed")
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM post"), 300)
        }
        try database.close()
    }

    /// The filter form `matches(_:)` compares the table's key, never the union view's row numbers, also
    /// when the key is declared by a table constraint (SQLite makes it the rowid all the same).
    func testTheFilterFormOnATableKeyedByAConstraint() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("plain.sqlite")
        try Shell.run(
            "sqlite3", source,
            """
            CREATE TABLE note_v1(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
            INSERT INTO note_v1 SELECT i, CASE WHEN i % 3 = 0 THEN 'hotpot ' || i ELSE 'noodles ' || i END FROM c;
            """)
        let database = try Database(path: directory.path("app.db"), configuration: Configuration(encryption: .none))
        defer { try? database.close() }
        _ = try database.write { db in try db.upgradeSchema(for: [MigratingNote.self]) }
        var options = LiveMigrationOptions()
        options.batchSize = 30
        options.pauseBetweenBatches = 0.2
        let migration = try database.migrateLive(MigratingNote.self, from: .table("note_v1", inFile: source), options: options)
        func moved() throws -> Int64 {
            try database.read { try $0.fetchValue(Int64.self, sql: "SELECT coalesce(max(id), 0) FROM main.note") } ?? 0
        }
        // Paused in the gap after the first batch, so that some rows are in the table and some are not.
        let deadline = Date().addingTimeInterval(20)
        while try moved() == 0, Date() < deadline { Thread.sleep(forTimeInterval: 0.005) }
        migration.pause()
        let inTable = try moved()
        XCTAssertGreaterThan(inTable, 0)
        XCTAssertLessThan(inTable, 300)
        func filtered() throws -> Set<Int64> {
            try database.read { db in
                Set(try MigratingNote.filter { _ in MigratingNote.matches(.searchBox("hotpot")) }.fetchAll(db).map(\.id))
            }
        }
        XCTAssertEqual(try filtered(), Set(stride(from: Int64(3), through: inTable, by: 3)))
        try migration.finishNow()
        XCTAssertEqual(try filtered(), Set(stride(from: Int64(3), through: 300, by: 3)))
    }
}
