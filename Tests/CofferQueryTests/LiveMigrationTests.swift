import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer
@testable import CofferEngine
@testable import CofferRecords

/// A note as the app now stores it, filled by live migrations.
@Table("note")
struct LiveNote: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
    var score: Int
}

/// Live migrations into an encrypted database: the table reads as the union of its rows and the source's
/// rows not moved yet, on readers and the writer; typed writes behave as on that union; the worker moves
/// every row exactly once; a reopen resumes; a rollback moves nothing. Sources are written by Python's
/// `sqlite3` (another SQLite), the `sqlite3` shell or raw SQL.
final class LiveMigrationTests: XCTestCase {
    private let key = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })

    /// A plaintext file with `note_v1(id INTEGER PRIMARY KEY, text, score)`: rows 1…`count`, score = id % 10.
    private func makeSource(_ path: String, count: Int) throws {
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("CREATE TABLE note_v1(id INTEGER PRIMARY KEY, text TEXT NOT NULL, score INTEGER NOT NULL, gone INTEGER NOT NULL DEFAULT 0)")
            db.executemany("INSERT INTO note_v1(id, text, score) VALUES (?, ?, ?)", [(i, "note %d" % i, i % 10) for i in range(1, int(sys.argv[2]) + 1)])
            db.commit()
            """
        let result = try Shell.run("/usr/bin/python3", ["-c", script, path, String(count)])
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    private func open(_ path: String) throws -> Database {
        try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
    }

    private func options(batch: Int) -> LiveMigrationOptions {
        var options = LiveMigrationOptions()
        options.batchSize = batch
        options.columnExpressions = ["body": "s.text"]
        return options
    }

    /// Waits until the worker moved at least `rows` rows (it is paused by the caller afterwards).
    private func waitForProgress(_ migration: LiveMigration, atLeast rows: Int) {
        let deadline = Date(timeIntervalSinceNow: 30)
        while migration.progress.movedRows < rows && Date() < deadline { usleep(1000) }
    }

    func testPlaintextFileIntoEncryptedDatabaseReadsTheUnionAndWritesThrough() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("plain.sqlite")
        try makeSource(sourcePath, count: 3000)
        let sourceBytes = try Data(contentsOf: URL(fileURLWithPath: sourcePath))
        let database = try open(directory.path("app.db"))

        let migration = try database.migrateLive(
            LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options(batch: 100))
        migration.pause()
        XCTAssertEqual(migration.progress.totalRows, 3000)
        // The rows written below are still in the source.
        let moved = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM main.note") } ?? 0
        XCTAssertLessThan(moved, 2500)
        // Readers and the writer read the union, whatever the worker moved so far.
        XCTAssertEqual(try database.read { try LiveNote.all().fetchCount($0) }, 3000)
        XCTAssertEqual(try database.write { try LiveNote.all().fetchCount($0) }, 3000)
        XCTAssertEqual(try database.read { try LiveNote.filter { $0.id == 2999 }.fetchOne($0)?.body }, "note 2999")

        try database.write { db in
            // An update and a delete of rows still in the source.
            var note = try XCTUnwrap(LiveNote.filter { $0.id == 2500 }.fetchOne(db))
            note.body = "edited"
            XCTAssertTrue(try note.update(db))
            XCTAssertTrue(try LiveNote(id: 2600, body: "", score: 0).delete(db))
            // An insert whose key is still in the source conflicts; with REPLACE it replaces.
            var clash = LiveNote(id: 2700, body: "clash", score: 1)
            XCTAssertThrowsError(try clash.insert(db))
            try clash.insert(db, onConflict: .replace)
            // SQLite's chosen key stays clear of the source's keys.
            var fresh = LiveNote(id: nil, body: "fresh", score: 5)
            try fresh.insert(db)
            XCTAssertEqual(fresh.id, 3001)
            // Query-builder writes reach the rows still in the source.
            XCTAssertEqual(try LiveNote.filter { $0.id > 2900 && $0.id <= 3000 }.updateAll(db) { [$0.score.set(to: 100)] }, 100)
            XCTAssertEqual(try LiveNote.filter { $0.id > 2800 && $0.id <= 2810 }.deleteAll(db), 10)
            var upserted = LiveNote(id: 2750, body: "upserted", score: 2)
            try upserted.upsert(db)
        }
        let expectedCount = 3000 - 1 - 10 + 1
        XCTAssertEqual(try database.read { try LiveNote.all().fetchCount($0) }, expectedCount)
        // Raw SQL reads the union too; raw SQL writes to the view are refused.
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, expectedCount)
        XCTAssertThrowsError(try database.write { try $0.execute(sql: "DELETE FROM note WHERE id = 1") })

        try migration.finishNow()
        XCTAssertTrue(migration.progress.isFinished)
        XCTAssertEqual(migration.progress.movedRows, 3000)
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), expectedCount)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM main.note"), expectedCount)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_temp_master"), 0)
            XCTAssertEqual(try LiveNote.filter { $0.id == 2500 }.fetchOne(db)?.body, "edited")
            XCTAssertNil(try LiveNote.filter { $0.id == 2600 }.fetchOne(db))
            XCTAssertEqual(try LiveNote.filter { $0.id == 2700 }.fetchOne(db)?.body, "clash")
            XCTAssertEqual(try LiveNote.filter { $0.id == 2750 }.fetchOne(db)?.body, "upserted")
            XCTAssertEqual(try LiveNote.filter { $0.id == 3001 }.fetchOne(db)?.body, "fresh")
            XCTAssertEqual(try LiveNote.filter { $0.score == 100 }.fetchCount(db), 100)
            XCTAssertEqual(try LiveNote.filter { $0.id == 1 }.fetchOne(db), LiveNote(id: 1, body: "note 1", score: 1))
        }
        // Raw SQL writes work again, and the source file was never written.
        try database.write { try $0.execute(sql: "DELETE FROM note WHERE id = 1") }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: sourcePath)), sourceBytes)
        // Declaring it again after the end returns a finished migration.
        XCTAssertTrue(try database.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath)).progress.isFinished)
        try database.close()
    }

    func testSameFileRenameWithFilterDropsTheSourceWhenDone() async throws {
        let directory = try TemporaryDirectory()
        let database = try open(directory.path("app.db"))
        try await database.write { db in
            try db.execute(
                sql:
                    "CREATE TABLE note_old(id INTEGER PRIMARY KEY, text TEXT NOT NULL, score INTEGER NOT NULL, gone INTEGER NOT NULL)"
            )
            for id in 1...1000 {
                try db.execute(
                    sql: "INSERT INTO note_old VALUES (?, ?, ?, ?)", arguments: [id, "old \(id)", id % 7, id % 5 == 0 ? 1 : 0])
            }
        }
        var options = options(batch: 64)
        options.filter = "gone = 0"
        options.columnExpressions = ["body": "upper(s.text)"]
        let migration = try database.migrateLive(LiveNote.self, from: .table("note_old"), options: options)
        let union = try await database.read { try LiveNote.all().fetchCount($0) }
        XCTAssertEqual(union, 800)
        var events: [ProgressEvent<LiveMigrationProgress>] = []
        for try await event in migration.progressUpdates() { events.append(event) }
        guard case .finished(let progress)? = events.last else { return XCTFail("no finished event: \(events)") }
        XCTAssertEqual(progress, LiveMigrationProgress(movedRows: 800, totalRows: 800, isFinished: true))
        try await database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 800)
            XCTAssertEqual(try LiveNote.filter { $0.id == 7 }.fetchOne(db)?.body, "OLD 7")
            XCTAssertNil(try LiveNote.filter { $0.id == 10 }.fetchOne(db))
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'note_old'"), 0)
        }
        try database.close()
    }

    func testReopenResumesAndKeepsDeletesDeleted() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("plain.sqlite")
        try makeSource(sourcePath, count: 2000)
        let path = directory.path("app.db")
        do {
            let database = try open(path)
            // 10 ms between batches: the pause lands long before the 40th batch, however late it runs.
            var paced = options(batch: 50)
            paced.pauseBetweenBatches = 0.01
            let migration = try database.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: paced)
            waitForProgress(migration, atLeast: 300)
            migration.pause()
            try database.write { db in
                for id in [Int64(10), 1500, 1999] { XCTAssertTrue(try LiveNote(id: id, body: "", score: 0).delete(db)) }
                var note = LiveNote(id: 1800, body: "kept", score: 0)
                XCTAssertTrue(try note.update(db))
                try note.insert(db, onConflict: .ignore)
            }
            try database.close()
        }
        let database = try open(path)
        // Before the declaration the table holds only what moved.
        let moved = try database.read { try LiveNote.all().fetchCount($0) }
        XCTAssertLessThan(moved, 1997)
        let migration = try database.migrateLive(
            LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options(batch: 50))
        XCTAssertEqual(try database.read { try LiveNote.all().fetchCount($0) }, 1997)
        try migration.finishNow()
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 1997)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(DISTINCT id) FROM note"), 1997)
            XCTAssertEqual(try LiveNote.filter { $0.id == 1800 }.fetchOne(db)?.body, "kept")
            XCTAssertEqual(try LiveNote.filter { $0.id.in([10, 1500, 1999]) }.fetchCount(db), 0)
        }
        XCTAssertEqual(migration.progress, LiveMigrationProgress(movedRows: 2000, totalRows: 2000, isFinished: true))
        try database.close()
    }

    func testARolledBackWriteMovesNothing() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("plain.sqlite")
        try makeSource(sourcePath, count: 500)
        let database = try open(directory.path("app.db"))
        let migration = try database.migrateLive(
            LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options(batch: 10))
        migration.pause()
        struct Abandon: Error {}
        XCTAssertThrowsError(
            try database.write { db in
                XCTAssertTrue(try LiveNote(id: 450, body: "", score: 0).delete(db))
                XCTAssertEqual(try LiveNote.filter { $0.id > 400 }.updateAll(db) { [$0.body.set(to: "rolled back")] }, 99)
                throw Abandon()
            })
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 500)
            XCTAssertEqual(try LiveNote.filter { $0.id == 450 }.fetchOne(db)?.body, "note 450")
            XCTAssertEqual(try LiveNote.filter { $0.body == "rolled back" }.fetchCount(db), 0)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM coffer_live_migration_moved"), 0)
        }
        try migration.finishNow()
        XCTAssertEqual(try database.read { try LiveNote.all().fetchCount($0) }, 500)
        XCTAssertEqual(migration.progress.movedRows, 500)
        try database.close()
    }

    /// A batch ends after the step in which an app call queues for the writer, committing what it moved:
    /// on a source with every other rowid missing and a filter, the first step takes the first 64 source
    /// rows, moves those that pass the filter, and the rest arrive in later batches exactly once.
    func testABatchCommitsWhatItMovedWhenAnAppCallWaits() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("sparse.sqlite")
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.execute("CREATE TABLE note_v1(id INTEGER PRIMARY KEY, text TEXT NOT NULL, score INTEGER NOT NULL)")
            db.executemany("INSERT INTO note_v1 VALUES (?, ?, ?)", [(i, "note %d" % i, i % 10) for i in range(1, 2000, 2)])
            db.commit()
            """
        let result = try Shell.run("/usr/bin/python3", ["-c", script, sourcePath])
        XCTAssertEqual(result.status, 0, result.stderr)
        // Batches of one row: the worker moves at most one before the pause; the test moves the migration.
        var options = options(batch: 1)
        options.filter = "s.score <> 3"
        let database = try open(directory.path("app.db"))
        let migration = try database.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options)
        migration.pause()
        let (state, moved) = try database.write { db in
            guard let union = db.liveMigration(of: "note") else { throw CofferError(code: .apiMisuse, message: "no union") }
            // The worker may have moved a batch before the pause: start from where it is.
            let before = try LiveMigrationState.read("note", db)
            var asked = 0
            let outcome = try LiveMigrationState.moveBatch(union, batchSize: 100_000, db) {
                asked += 1
                return true
            }
            XCTAssertEqual(asked, 1)
            // The 64th odd rowid above the watermark (0, or the last rowid the worker moved, odd).
            let start = before?.watermark ?? 0
            XCTAssertEqual(outcome.0.watermark, (start == 0 ? -1 : start) + 128)
            return outcome
        }
        XCTAssertFalse(state.isDone)
        XCTAssertGreaterThan(moved, 40)
        XCTAssertLessThan(moved, 64)
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 800)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM main.note"), state.movedRows)
        }
        migration.resume()
        try migration.finishNow()
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 800)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(DISTINCT id) FROM note"), 800)
            XCTAssertEqual(try LiveNote.filter { $0.score == 3 }.fetchCount(db), 0)
        }
        XCTAssertEqual(migration.progress, LiveMigrationProgress(movedRows: 800, totalRows: 800, isFinished: true))
        try database.close()
    }

    /// An app write that queues while a batch runs interrupts it: the batch rolls back and the write goes
    /// in at once, where it used to wait for the batch (here `maximumAppWait` would keep it waiting for
    /// all 100,000 rows). Every row still moves exactly once.
    func testAnAppWriteDuringABatchRollsTheBatchBackAndGoesFirst() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("plain.sqlite")
        try makeSource(sourcePath, count: 100_000)
        let database = try open(directory.path("app.db"))
        var options = options(batch: 100_000)
        options.maximumAppWait = 600
        let migration = try database.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options)
        let deadline = Date(timeIntervalSinceNow: 30)
        while !database.writer.isGivingWay && Date() < deadline { usleep(200) }
        XCTAssertTrue(database.writer.isGivingWay, "the first batch runs")
        let (inTable, moved) = try database.write { db -> (Int?, Int?) in
            var note = LiveNote(id: 200_000, body: "app", score: 1)
            try note.insert(db)
            return (
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM main.note"),
                try db.fetchValue(Int.self, sql: "SELECT moved_rows FROM coffer_live_migration WHERE target = 'note'")
            )
        }
        XCTAssertEqual(inTable, 1, "the batch rolled back: only the app's row is in the table")
        XCTAssertEqual(moved, 0)
        try migration.finishNow()
        try database.read { db in
            XCTAssertEqual(try LiveNote.all().fetchCount(db), 100_001)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(DISTINCT id) FROM note"), 100_001)
            XCTAssertEqual(try LiveNote.filter { $0.id == 200_000 }.fetchOne(db)?.body, "app")
        }
        XCTAssertEqual(migration.progress, LiveMigrationProgress(movedRows: 100_000, totalRows: 100_000, isFinished: true))
        try database.close()
    }

    /// Closing the database stops a paused worker: its thread ends and its progress stream throws, where
    /// it used to wait for a `resume()` that could no longer come.
    func testClosingTheDatabaseEndsAPausedMigration() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("plain.sqlite")
        try makeSource(sourcePath, count: 5000)
        let database = try open(directory.path("app.db"))
        var slow = options(batch: 10)
        slow.pauseBetweenBatches = 0.01
        let migration = try database.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: slow)
        migration.pause()
        let ended = expectation(description: "the progress stream ends")
        let updates = migration.progressUpdates()
        let task = Task {
            do {
                for try await _ in updates {}
                XCTFail("a closed database's migration cannot finish")
            } catch let error as CofferError {
                XCTAssertEqual(error.code, .apiMisuse)
                XCTAssertTrue(error.message.contains("closed"), error.message)
            } catch {
                XCTFail("\(error)")
            }
            ended.fulfill()
        }
        try database.close()
        wait(for: [ended], timeout: 10)
        task.cancel()
        XCTAssertFalse(migration.progress.isFinished)
        XCTAssertThrowsError(try migration.finishNow())
        // Reopened and declared again, it resumes and finishes.
        let reopened = try open(directory.path("app.db"))
        let resumed = try reopened.migrateLive(LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: slow)
        try resumed.finishNow()
        XCTAssertEqual(try reopened.read { try LiveNote.all().fetchCount($0) }, 5000)
        try reopened.close()
    }

    func testObservingAMigratingTable() throws {
        let directory = try TemporaryDirectory()
        let sourcePath = directory.path("plain.sqlite")
        try makeSource(sourcePath, count: 1000)
        let database = try open(directory.path("app.db"))
        let migration = try database.migrateLive(
            LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options(batch: 25))
        migration.pause()
        let seen = LockedValues()
        let queue = DispatchQueue(label: "observer")
        let handle = database.observe(on: queue, { try LiveNote.filter { $0.score == 3 }.fetchCount($0) }) { seen.append($0) }
        defer { handle.cancel() }
        seen.wait(for: 100)
        try database.write { db in
            let note = LiveNote(id: 999, body: "now 3", score: 3)  // was score 9, still in the source
            XCTAssertTrue(try note.update(db))
        }
        seen.wait(for: 101)
        migration.resume()
        try migration.finishNow()
        try database.write { db in _ = try LiveNote.filter { $0.id == 3 }.deleteAll(db) }
        seen.wait(for: 100)
        // Batches moved rows without changing what the query reads: no value repeated.
        XCTAssertEqual(seen.values, [100, 101, 100])
        try database.close()
    }

    /// A WAL-mode source file that another process keeps open (the `sqlite3` shell), every row and the
    /// table itself only in its `-wal`: readers and the writer read every row through the union, writes
    /// reach rows still in the source, and the worker moves every row. An attachment that read the main
    /// file alone (SQLite's `immutable`, tried for readers and not kept) finds no table at all.
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
        let database = try open(directory.path("app.db"))
        let migration = try database.migrateLive(
            LiveNote.self, from: .table("note_v1", inFile: sourcePath), options: options(batch: 50))
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

/// Values an observer delivered, and a wait for one of them.
private final class LockedValues: @unchecked Sendable {
    private let condition = NSCondition()
    private var list: [Int] = []

    var values: [Int] { condition.withLock { list } }

    func append(_ value: Int) {
        condition.withLock {
            list.append(value)
            condition.broadcast()
        }
    }

    func wait(for value: Int) {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 10)
        while list.last != value && condition.wait(until: deadline) {}
    }
}
