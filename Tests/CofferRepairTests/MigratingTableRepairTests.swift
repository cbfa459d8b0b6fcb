import Coffer
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

@Table("note")
private struct MigratingNote: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
    var score: Int
}

/// Repair of a database in the middle of a live migration: the output keeps the moved rows and the
/// migration's state (watermark and out-of-order set) as ordinary tables, so declaring the migration on the
/// output resumes it: every source row arrives once, the app's deletes stay deleted and its updates stay.
final class MigratingTableRepairTests: XCTestCase {
    func testRepairOutputResumesTheMigration() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("plain.sqlite")
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("CREATE TABLE note_v1(id INTEGER PRIMARY KEY, text TEXT NOT NULL, score INTEGER NOT NULL)")
            db.executemany("INSERT INTO note_v1 VALUES (?, ?, ?)", [(i, "note %d" % i, i % 10) for i in range(1, 2001)])
            db.commit()
            """
        let made = try Shell.run("/usr/bin/python3", ["-c", script, source])
        XCTAssertEqual(made.status, 0, made.stderr)
        let configuration = Configuration(encryption: .passphrase("repair me"))
        var options = LiveMigrationOptions()
        options.batchSize = 100
        options.columnExpressions = ["body": "s.text"]
        let output = directory.path("recovered.db")

        let database = try Database(path: directory.path("app.db"), configuration: configuration)
        try database.write { db in try db.execute(sql: try MigratingNote.createTableSQL()) }
        let migration = try database.migrateLive(MigratingNote.self, from: .table("note_v1", inFile: source), options: options)
        let deadline = Date(timeIntervalSinceNow: 30)
        while migration.progress.movedRows < 300 && Date() < deadline { usleep(1000) }
        migration.pause()
        try database.write { db in
            XCTAssertTrue(try MigratingNote(id: 10, body: "", score: 0).delete(db))  // moved already
            XCTAssertTrue(try MigratingNote(id: 1900, body: "", score: 0).delete(db))  // still in the source
            XCTAssertTrue(try MigratingNote(id: 1800, body: "edited", score: 7).update(db))  // moved early
        }
        let moved = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM main.note") } ?? 0
        XCTAssertLessThan(moved, 1998)
        let report = try database.repair(to: output)
        try database.close()
        XCTAssertEqual(report.tables["note"], moved)
        XCTAssertEqual(report.tables["coffer_live_migration"], 1)

        let recovered = try Database(path: output, configuration: configuration)
        defer { try? recovered.close() }
        let resumed = try recovered.migrateLive(MigratingNote.self, from: .table("note_v1", inFile: source), options: options)
        try resumed.finishNow()
        try recovered.read { db in
            XCTAssertEqual(try MigratingNote.all().fetchCount(db), 1998)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(DISTINCT id) FROM note"), 1998)
            XCTAssertEqual(try MigratingNote.filter { $0.id.in([10, 1900]) }.fetchCount(db), 0)
            XCTAssertEqual(
                try MigratingNote.filter { $0.id == 1800 }.fetchOne(db), MigratingNote(id: 1800, body: "edited", score: 7))
            XCTAssertEqual(try MigratingNote.filter { $0.id == 1999 }.fetchOne(db)?.body, "note 1999")
        }
        XCTAssertEqual(resumed.progress, LiveMigrationProgress(movedRows: 2000, totalRows: 2000, isFinished: true))
    }
}
