import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `backupWithProgress` and `vacuumWithProgress`: progress in pages, a last `.finished` event, and a stop
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
        var last = (completed: 0, total: 0)
        var steps = 0
        var finished: BackupGeneration?
        for try await event in database.backupWithProgress(to: backups, pagesPerStep: 16) {
            switch event {
            case .progress(let completed, let total):
                XCTAssertGreaterThanOrEqual(completed, last.completed)
                XCTAssertLessThanOrEqual(completed, total)
                last = (completed, total)
                steps += 1
            case .finished(let generation):
                finished = generation
            }
        }
        XCTAssertGreaterThan(steps, 10)
        XCTAssertEqual(last.completed, last.total)
        XCTAssertEqual(finished?.pageCount, last.total)
        XCTAssertEqual(try Database.backupGenerations(in: backups).map(\.id), [1])
    }

    func testStoppingABackupRecordsNothing() async throws {
        let (directory, database) = try makeDatabase()
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

    private static func count(_ database: Database) throws -> Int? {
        try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
    }

    private static func freePages(_ database: Database) throws -> Int? {
        try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA freelist_count") }
    }
}
