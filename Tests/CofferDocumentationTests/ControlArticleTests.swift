import Coffer
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of Control.md, compiled and run as written.
final class ControlArticleTests: XCTestCase {
    private func noteDatabase() throws -> (TemporaryDirectory, Database) {
        let (directory, database) = try articleDatabase()
        try database.write { db in try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)") }
        return (directory, database)
    }

    func testCancellingATask() async throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }

        let search = Task {
            try await database.read { db in
                try db.fetchAll(sql: "SELECT * FROM note WHERE text LIKE ?", arguments: ["%coffee%"])
            }
        }
        // The screen went away:
        search.cancel()  // the statement stops; `try await search.value` throws CancellationError

        _ = try? await search.value
        let count = try await database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(count, 0)
    }

    func testInterrupting() throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }

        do {
            try database.write { db in
                try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["draft"])
            }
        } catch CofferError.interrupt {
            // stopped by database.interrupt(): the transaction rolled back, nothing of it was kept
        }

        database.interrupt()  // any thread: every running statement throws CofferError.interrupt

        let count = try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(count, 1)
    }

    func testSnapshots() async throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }

        let snapshot = try database.makeSnapshot()
        defer { snapshot.close() }
        let before = try await snapshot.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        try await database.write { db in try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["later"]) }
        let after = try await snapshot.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        // before == after: the snapshot does not see the insert

        XCTAssertEqual(before, after)
        let now = try await database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(now, 1)

        let counts = ObservedValues<Int>()
        let live = database.observe(
            from: snapshot, on: .main,
            { db in
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? 0
            }
        ) { count in print("notes: \(count)") }  // the snapshot's count, then the current one, then each change
        let recorded = database.observe(
            from: snapshot, on: DispatchQueue(label: "counts"),
            { db in
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? 0
            }
        ) { counts.append($0) }
        XCTAssertTrue(counts.wait { values, _ in values == [0, 1] }, "\(counts.values)")
        live.cancel()
        recorded.cancel()
        guard LinkedSQLite.supports(.snapshots) else { return }

        async let notes = snapshot.concurrentRead { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        async let words = snapshot.concurrentRead { db in try db.fetchValue(Int.self, sql: "SELECT sum(length(text)) FROM note") }
        let report = try await (notes, words)  // both read the snapshot's state, on two readers at once

        XCTAssertEqual(report.0, 0)
        XCTAssertNil(report.1)
    }

    func testRefusingACommit() throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }

        final class NoteLimit: TransactionObserver {
            struct TooManyNotes: Error {}

            func willCommit(_ connection: Connection) throws {
                let count = try connection.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? 0
                if count > 100 { throw TooManyNotes() }
            }
        }

        let limit = NoteLimit()
        try database.add(transactionObserver: limit)  // kept weakly: keep `limit` alive
        do {
            try database.write { db in
                for _ in 0..<101 { try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["x"]) }
            }
        } catch is NoteLimit.TooManyNotes {
            // rolled back: none of the 101 notes was kept
        }

        XCTAssertEqual(try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 0)
    }

    func testProgress() async throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }
        let backupsDirectory = URL(fileURLWithPath: directory.path("backups"))

        for try await event in database.backupWithProgress(to: backupsDirectory) {
            switch event {
            case .progress(let copied, let total): print("backup: \(copied)/\(total) pages")
            case .finished(let generation): print("generation \(generation.id) written")
            }
        }

        let vacuum = Task {
            for try await event in database.vacuumWithProgress() {
                if case .progress(let written, let expected) = event { print("vacuum: \(written)/\(expected) pages") }
            }
        }
        vacuum.cancel()  // stops the copy; the database is left exactly as it was

        _ = try? await vacuum.value
        XCTAssertEqual(try Database.backupGenerations(in: backupsDirectory).count, 1)

        let recoveredPath = directory.path("recovered.db")
        // import CofferRepair
        for try await event in database.repairWithProgress(to: recoveredPath) {
            if case .progress(let examined, let total) = event { print("repair: \(examined)/\(total) pages") }
        }
        XCTAssertTrue(FileManager.default.fileExists(atPath: recoveredPath))

        let restoredPath = directory.path("restored.db")
        let configuration = articleConfiguration
        var migrator = Migrator()
        migrator.register("v2: a folder per note") { db in try db.execute(sql: "ALTER TABLE note ADD COLUMN folder TEXT") }

        for try await event in Database.restoreWithProgress(
            from: backupsDirectory, to: restoredPath, configuration: configuration)
        {
            if case .progress(let done, let total) = event { print("restore: \(done)/\(total) pages") }
        }
        for try await event in migrator.migrateWithProgress(database) {
            if case .finished(let applied) = event { print("applied \(applied)") }
        }

        for try await event in database.changePassphraseWithProgress(to: .passphrase("new secret")) {
            if case .progress(let pages, let total) = event { print("rekey: \(pages)/\(total) pages") }
        }

        let restored = try Database(path: restoredPath, configuration: configuration)
        let restoredNotes = try await restored.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(restoredNotes, 0)
        try restored.close()
        let migrations = migrator
        let applied = try await database.write { try migrations.appliedMigrations($0) }
        XCTAssertEqual(applied, ["v2: a folder per note"])
    }
}
