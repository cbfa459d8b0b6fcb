import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `Migrator.migrateWithProgress`: one event per migration, and a stop that rolls back the migration it
/// interrupts and keeps the ones before it.
final class MigrationProgressTests: XCTestCase {
    /// v1 and v3 are quick; v2 writes a row and then, while `slow`'s last entry is "slow", runs a query of
    /// seconds.
    private func migrator(_ slow: LockedLog, started: DispatchSemaphore) -> Migrator {
        var migrator = Migrator()
        migrator.register("v1") { db in try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)") }
        migrator.register("v2") { db in
            try db.execute(sql: "INSERT INTO note(text) VALUES ('from v2')")
            if slow.entries.last == "slow" {
                started.signal()
                // The stop lands between two statements, when no statement runs for sqlite3_interrupt to
                // reach (SQLite clears it as the next one starts): the latch's progress handler must stop it.
                Thread.sleep(forTimeInterval: 0.3)
                _ = try db.fetchValue(
                    Int.self,
                    sql:
                        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 200000000) SELECT count(*) FROM n"
                )
            }
        }
        migrator.register("v3") { db in try db.execute(sql: "CREATE INDEX note_text ON note(text)") }
        return migrator
    }

    func testEachMigrationIsReportedAndTheLastEventNamesThoseApplied() async throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("m.db"), configuration: Configuration(encryption: .passphrase("m")))
        var events: [String] = []
        for try await event in migrator(LockedLog(), started: DispatchSemaphore(value: 0)).migrateWithProgress(database) {
            switch event {
            case .progress(let done, let total): events.append("\(done)/\(total)")
            case .finished(let applied): events.append(applied.joined(separator: ","))
            }
        }
        XCTAssertEqual(events, ["0/3", "1/3", "2/3", "3/3", "v1,v2,v3"])
        // Run again: nothing left to apply, each still counted.
        var again: [String] = []
        for try await event in migrator(LockedLog(), started: DispatchSemaphore(value: 0)).migrateWithProgress(database) {
            if case .finished(let applied) = event { again = applied }
        }
        XCTAssertEqual(again, [])
        try database.close()
    }

    func testStoppingInterruptsTheRunningMigrationAndKeepsTheOnesBefore() async throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("m.db"), configuration: Configuration(encryption: .passphrase("m")))
        let slow = LockedLog()
        slow.append("slow")
        let started = DispatchSemaphore(value: 0)
        let migrator = migrator(slow, started: started)
        let run = Task {
            for try await _ in migrator.migrateWithProgress(database) {}
        }
        // Cancel once v2 is inside its slow query.
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                started.wait()
                continuation.resume()
            }
        }
        let stoppedAt = Date()
        run.cancel()
        _ = await run.result
        // The write that follows waits for the interrupted migration to roll back and let the writer go.
        let applied = try await database.write { try migrator.appliedMigrations($0) }
        XCTAssertLessThan(Date().timeIntervalSince(stoppedAt), 5, "the slow query was interrupted, not finished")
        XCTAssertEqual(applied, ["v1"])
        let rowsAfterStop = try await database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(rowsAfterStop, 0, "v2's insert was rolled back")
        // Without the slow query, the next run applies v2 and v3.
        slow.append("quick")
        XCTAssertEqual(try migrator.migrate(database), ["v2", "v3"])
        let rows = try await database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(rows, 1)
        try database.close()
    }
}
