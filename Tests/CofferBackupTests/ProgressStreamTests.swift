import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `backupWithProgress`, `restoreWithProgress` and `vacuumWithProgress`: progress in pages, a last `.finished` event, and a stop
/// that leaves every file as it was.
final class ProgressStreamTests: XCTestCase {
    private func makeDatabase(rows: Int = 4000) throws -> (TemporaryDirectory, Database) {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("progress.db"), configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: rows, bodyBytes: 400)
        return (directory, database)
    }

    func testABackupReportsItsPagesAndFinishes() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let backups = URL(fileURLWithPath: directory.path("backups"))
        let (steps, last, finished) = try await Self.collect(database.backupWithProgress(to: backups, pagesPerStep: 16))
        XCTAssertGreaterThan(steps, 10)
        XCTAssertEqual(last.completed, last.total)
        XCTAssertEqual(finished?.pageCount, last.total)
        XCTAssertEqual(try Database.backupGenerations(in: backups).map(\.id), [1])
    }

    func testStoppingABackupRecordsNothing() async throws {
        // The stop races the backup's own thread: it must land before the last page. With 4,000 rows
        // (about 430 one-page steps) a consumer scheduled late on a loaded machine found the backup done
        // (CI on SQLCipher 4, 2026-12-02: generations [1, 2]); 40,000 rows give it ten times longer.
        let (directory, database) = try makeDatabase(rows: 40_000)
        defer { withExtendedLifetime(directory) {} }
        let backups = URL(fileURLWithPath: directory.path("backups"))
        for try await event in database.backupWithProgress(to: backups, pagesPerStep: 1) {
            if case .progress = event { break }
        }
        // Waits for the stopped backup (backups take one lock), then takes one of its own.
        let generation = try await database.backup(to: backups)
        XCTAssertEqual(generation.id, 1)
        XCTAssertEqual(try Database.backupGenerations(in: backups).map(\.id), [1])
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: backups.path).filter { $0.contains("tmp") }
        XCTAssertEqual(leftovers, [])
    }

    func testStoppingAnIncrementalBackupKeepsTheNextOneComplete() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let backups = URL(fileURLWithPath: directory.path("backups"))
        try await database.backup(to: backups, kind: .full)
        try await database.write { db in try db.execute(sql: "UPDATE item SET n = n + 1") }
        let stopped = Task {
            for try await event in database.backupWithProgress(to: backups, kind: .incremental) {
                if case .finished = event { return true }
            }
            return false
        }
        stopped.cancel()
        _ = try? await stopped.value
        // Whether the stop came in time or not, the next increment holds every change since the last
        // recorded generation.
        let next = try await database.backup(to: backups, kind: .incremental)
        XCTAssertEqual(next.kind, .incremental)
        let restoredPath = directory.path("restored.db")
        try Database.restore(from: backups, to: restoredPath, configuration: BackupFixture.configuration())
        let restored = try Database(path: restoredPath, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(restored), try BackupFixture.dump(database))
    }

    func testAVacuumReportsItsPagesAndFinishes() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        try await database.write { db in try db.execute(sql: "DELETE FROM item WHERE id % 2 = 0") }
        var report: VacuumReport?
        var progressEvents = 0
        for try await event in database.vacuumWithProgress(batchRows: 100) {
            switch event {
            case .progress: progressEvents += 1
            case .finished(let value): report = value
            }
        }
        XCTAssertGreaterThan(progressEvents, 5)
        let pages = try XCTUnwrap(report)
        XCTAssertLessThan(pages.pagesAfter, pages.pagesBefore)
        XCTAssertEqual(try Self.count(database), 2000)
    }

    func testStoppingAVacuumLeavesTheDatabaseAsItWas() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        try await database.write { db in try db.execute(sql: "DELETE FROM item WHERE id % 2 = 0") }
        let before = try BackupFixture.dump(database)
        let freeBefore = try Self.freePages(database)
        for try await event in database.vacuumWithProgress(batchRows: 10) {
            if case .progress = event { break }
        }
        // A write waits for the vacuum, which holds the writer while it copies.
        try await database.write { _ in }
        XCTAssertEqual(try BackupFixture.dump(database), before)
        XCTAssertEqual(try Self.freePages(database), freeBefore)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path("progress.db-vacuum")))
    }

    /// A full backup and two increments of `database`, in `backups`.
    private func backupChain(_ database: Database, to backups: URL) async throws {
        try await database.backup(to: backups, kind: .full)
        for round in 0..<2 {
            try await database.write { db in try db.execute(sql: "UPDATE item SET n = n + 1 WHERE id % 3 = ?", arguments: [round])
            }
            try await database.backup(to: backups, kind: .incremental)
        }
    }

    func testARestoreReportsItsPagesAndFinishes() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let backups = URL(fileURLWithPath: directory.path("backups"))
        try await backupChain(database, to: backups)
        let restoredPath = directory.path("restored.db")
        let (steps, last, finished) = try await Self.collect(
            Database.restoreWithProgress(from: backups, to: restoredPath, configuration: BackupFixture.configuration()))
        XCTAssertEqual(finished?.id, 3)
        // The base, two increments, then the HMAC check in batches of 256 pages.
        XCTAssertGreaterThan(steps, 4)
        XCTAssertEqual(last.completed, last.total)
        let restored = try Database(path: restoredPath, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(restored), try BackupFixture.dump(database))
    }

    func testStoppingARestoreLeavesTheDestinationAsItWas() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let backups = URL(fileURLWithPath: directory.path("backups"))
        try await backupChain(database, to: backups)
        // Stopped at its first event.
        let restoredPath = directory.path("restored.db")
        for try await event in Database.restoreWithProgress(
            from: backups, to: restoredPath, configuration: BackupFixture.configuration())
        {
            if case .progress = event { break }
        }
        // An existing destination stopped mid-restore keeps its bytes.
        let existing = directory.path("existing.db")
        try Data("not replaced".utf8).write(to: URL(fileURLWithPath: existing))
        let stopped = Task {
            for try await event in Database.restoreWithProgress(
                from: backups, to: existing, configuration: BackupFixture.configuration(), replacingExisting: true)
            {
                if case .progress = event { throw CancellationError() }
            }
        }
        _ = await stopped.result
        // The work runs on a thread of its own: give it time to reach its next check and clean up.
        for _ in 0..<100 {
            let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
            if !names.contains(where: { $0.contains("tmp") || $0.contains("restore") }) { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        }
        // Each file is as it was, or (when the stop came after the last check) the complete restore: never
        // anything between, and no temporary file left.
        let expected = try BackupFixture.dump(database)
        for (path, before) in [(restoredPath, nil), (existing, Data("not replaced".utf8))] {
            let now = FileManager.default.contents(atPath: path)
            if now != before {
                let restored = try Database(path: path, configuration: BackupFixture.configuration())
                XCTAssertEqual(try BackupFixture.dump(restored), expected, path)
                try restored.close()
            }
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        XCTAssertFalse(names.contains { $0.hasPrefix(".tmp-") }, "\(names)")
    }

    /// Reads a progress sequence to its end, checking that progress never goes back or past its total:
    /// the progress events, the last one, and the result.
    private static func collect<R: Sendable>(
        _ events: AsyncThrowingStream<ProgressEvent<R>, any Error>
    ) async throws -> (steps: Int, last: (completed: Int, total: Int), finished: R?) {
        var last = (completed: 0, total: 0)
        var steps = 0
        var finished: R?
        for try await event in events {
            switch event {
            case .progress(let completed, let total):
                XCTAssertGreaterThanOrEqual(completed, last.completed)
                XCTAssertLessThanOrEqual(completed, total)
                last = (completed, total)
                steps += 1
            case .finished(let result):
                finished = result
            }
        }
        return (steps, last, finished)
    }

    private static func count(_ database: Database) throws -> Int? {
        try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
    }

    private static func freePages(_ database: Database) throws -> Int? {
        try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") }
    }
}
