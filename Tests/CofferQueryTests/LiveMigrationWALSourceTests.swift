import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer

/// A live migration from a WAL-mode source file that another process keeps open, its rows only in the
/// source's `-wal` (the `sqlite3` shell wrote them and has not checkpointed): readers and the writer read
/// every row through the union, and the worker moves every row. An attachment that read the main file
/// alone (SQLite's `immutable`, tried for readers and not kept) would find no table at all.
final class LiveMigrationWALSourceTests: XCTestCase {
    func testRowsOnlyInTheSourcesWALAreReadAndMoved() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("wal.sqlite")
        let holder = try ShellSession("sqlite3", sourcePath)
        try holder.send(
            """
            PRAGMA journal_mode=WAL; PRAGMA wal_autocheckpoint=0;
            CREATE TABLE note_v1(id INTEGER PRIMARY KEY, text TEXT NOT NULL, score INTEGER NOT NULL);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000)
              INSERT INTO note_v1 SELECT i, 'note ' || i, i % 10 FROM n;
            SELECT 'ready';
            """)
        try holder.waitForLine("ready")
        XCTAssertTrue(FileManager.default.fileExists(atPath: sourcePath + "-wal"))
        let key = Data((0..<32).map { UInt8($0 &* 5 &+ 1) })
        let database = try Database(path: directory.path("app.db"), configuration: Configuration(encryption: .rawKey(key)))
        var options = LiveMigrationOptions()
        options.batchSize = 50
        options.columnExpressions = ["body": "s.text"]
        let migration = try database.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options)
        migration.pause()
        XCTAssertEqual(migration.progress.totalRows, 1000)

        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 1000)
            XCTAssertEqual(try LiveNote.filter { $0.id == 1000 }.fetchOne(db)?.body, "note 1000")
        }
        try database.write { db in
            XCTAssertTrue(try LiveNote(id: 999, body: "edited", score: 0).update(db))
            XCTAssertEqual(try LiveNote.filter { $0.id == 998 }.deleteAll(db), 1)
        }
        try migration.finishNow()
        XCTAssertEqual(migration.progress.movedRows, 1000)
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 999)
            XCTAssertEqual(try LiveNote.filter { $0.id == 999 }.fetchOne(db)?.body, "edited")
        }
        try database.close()
        try holder.finish()
    }
}
