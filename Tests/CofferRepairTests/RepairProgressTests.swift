import Coffer
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

/// `Database.repairWithProgress(to:backup:)`: progress in pages examined, a last `.finished` report, and a
/// stop that leaves no output file and the database as it was.
final class RepairProgressTests: XCTestCase {
    private func makeDatabase(_ directory: TemporaryDirectory, rows: Int) throws -> Database {
        let database = try Database(
            path: directory.path("app.db"), configuration: Configuration(encryption: .passphrase("progress")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT NOT NULL)")
            for id in 1...rows {
                try db.execute(
                    sql: "INSERT INTO item(id, body) VALUES (?, ?)",
                    arguments: [id, String(repeating: "row \(id) ", count: 40)])
            }
        }
        return database
    }

    func testARepairReportsItsPagesAndFinishesWithEveryRow() async throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 3000)
        defer { try? database.close() }
        let destination = directory.path("recovered.db")
        var last = (completed: 0, total: 0)
        var steps = 0
        var finished: RepairReport?
        for try await event in database.repairWithProgress(to: destination) {
            switch event {
            case .progress(let completed, let total):
                XCTAssertGreaterThanOrEqual(completed, last.completed)
                last = (completed, total)
                steps += 1
            case .finished(let report):
                finished = report
            }
        }
        let report = try XCTUnwrap(finished)
        XCTAssertGreaterThan(steps, 1)
        XCTAssertEqual(last.total, report.pagesTotal)
        XCTAssertEqual(report.tables["item"], 3000)
        let recovered = try Database(path: destination, configuration: Configuration(encryption: .passphrase("progress")))
        defer { try? recovered.close() }
        let count = try await recovered.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
        XCTAssertEqual(count, 3000)
    }

    func testStoppingARepairLeavesNoOutputAndTheDatabaseAsItWas() async throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 20000)
        defer { try? database.close() }
        let destination = directory.path("recovered.db")
        for try await event in database.repairWithProgress(to: destination) {
            if case .progress = event { break }
        }
        // A write waits for the repair, which holds the file still while it reads: after it, the repair ended.
        try await database.write { db in try db.execute(sql: "INSERT INTO item(id, body) VALUES (20001, 'after')") }
        XCTAssertFalse(FileManager.default.fileExists(atPath: destination), "a stopped repair creates no output")
        XCTAssertFalse(FileManager.default.fileExists(atPath: RepairJob.partialPath(for: destination)))
        let count = try await database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
        XCTAssertEqual(count, 20001)
    }
}
