import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Full and incremental backups while a writer commits without pause: measures the longest commit
/// stall and the bytes each increment writes, then restores the newest generation and checks it is the
/// database exactly as of that generation.
///
/// Size: `COFFER_LOAD_ROWS` rows of ~300 bytes before the writer starts (default 20,000, about 8 MB).
final class BackupUnderLoadTests: XCTestCase {
    /// The writer's loop, on its own thread; commit durations are collected under a lock.
    final class Writer: @unchecked Sendable {
        private let lock = NSLock()
        private var stop = false
        private var durations: [(end: Date, seconds: Double)] = []
        private var last = 0
        let done = DispatchSemaphore(value: 0)
        private(set) var error: (any Error)?

        func run(_ database: Database, from first: Int) {
            var id = first
            while !lock.withLock({ stop }) {
                let started = Date()
                do {
                    let current = id
                    try database.write { db in
                        try db.execute(
                            sql: "INSERT INTO log(id, body) VALUES (?, ?)",
                            arguments: [current, String(repeating: "w", count: 120)])
                        try db.execute(sql: "UPDATE item SET n = ? WHERE id = ?", arguments: [current, current % 5000 + 1])
                    }
                } catch {
                    self.error = error
                    break
                }
                let finished = Date()
                lock.withLock {
                    durations.append((finished, finished.timeIntervalSince(started)))
                    last = id
                }
                id += 1
            }
            done.signal()
        }

        func finish() -> [(end: Date, seconds: Double)] {
            lock.withLock { stop = true }
            done.wait()
            return lock.withLock { durations }
        }

        var commits: Int { lock.withLock { last } }
    }

    func testBackupsUnderContinuousWritesStallLittleAndRestoreExactly() throws {
        let rows = TestKnob.value("COFFER_LOAD_ROWS", default: 20_000)
        let directory = try TemporaryDirectory()
        let path = directory.path("load.db")
        var configuration = BackupFixture.configuration()
        configuration.readerCount = 2
        let database = try Database(path: path, configuration: configuration)
        try BackupFixture.populate(database, rows: rows, bodyBytes: 280)
        try database.write { db in try db.execute(sql: "CREATE TABLE log(id INTEGER PRIMARY KEY, body TEXT)") }
        try database.checkpoint(.truncate)
        let backups = directory.url.appendingPathComponent("backups")

        let writer = Writer()
        Thread.detachNewThread { writer.run(database, from: 1) }
        var windows: [(kind: BackupGeneration.Kind, start: Date, end: Date, bytes: Int, commitsBefore: Int, commitsAfter: Int)] =
            []
        var generations: [BackupGeneration] = []
        for index in 0..<6 {
            let before = writer.commits
            let start = Date()
            let generation = try database.backup(to: backups, kind: index == 0 ? .full : .automatic, pagesPerStep: 128)
            windows.append((generation.kind, start, Date(), generation.byteCount, before, writer.commits))
            generations.append(generation)
        }
        let durations = writer.finish()
        XCTAssertNil(writer.error)
        let inBackups = durations.filter { commit in
            windows.contains { commit.end >= $0.start && commit.end <= $0.end.addingTimeInterval(1) }
        }
        let worstDuringBackup = (inBackups.map(\.seconds).max() ?? 0) * 1000
        let worstOverall = (durations.map(\.seconds).max() ?? 0) * 1000
        let sorted = durations.map(\.seconds).sorted()
        let median = sorted.isEmpty ? 0 : sorted[sorted.count / 2] * 1000
        XCTAssertEqual(generations.first?.kind, .full)
        XCTAssertTrue(generations.dropFirst().allSatisfy { $0.kind == .incremental })
        XCTAssertLessThan(worstDuringBackup, 1000, "a commit must never wait for a whole backup")

        // The newest generation is the database as of its snapshot: the log is a prefix 1…N and every
        // item's n is what the writer had set by N.
        let newest = try XCTUnwrap(generations.last)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: configuration)
        let restoredDatabase = try Database(path: restored, configuration: configuration)
        defer { try? restoredDatabase.close() }
        let last = try restoredDatabase.read { try $0.fetchValue(Int.self, sql: "SELECT max(id) FROM log") } ?? 0
        let count = try restoredDatabase.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM log") } ?? -1
        XCTAssertEqual(count, last)
        XCTAssertGreaterThan(last, 0)
        let restoredItems = try restoredDatabase.read { db in
            try db.fetchAll(sql: "SELECT id, n FROM item ORDER BY id").map {
                [($0["id"] as Int?) ?? -1, ($0["n"] as Int?) ?? -1]
            }
        }
        // Commit k set item (k % 5000 + 1).n = k; populate set item i's n to i − 1.
        let expected = (1...rows).map { id -> [Int] in
            let first = id - 1 == 0 ? 5000 : id - 1
            guard id <= 5000, first <= last else { return [id, id - 1] }
            return [id, first + 5000 * ((last - first) / 5000)]
        }
        XCTAssertEqual(restoredItems.count, expected.count)
        let mismatches = zip(restoredItems, expected).filter { $0 != $1 }
        XCTAssertTrue(
            mismatches.isEmpty,
            "\(mismatches.count) items differ from the database as of generation \(newest.id), first: \(mismatches.prefix(3))")
        XCTAssertTrue(try Database.verify(path: restored, configuration: configuration).isClean)
        try database.close()

        let full = windows[0]
        let p99 = sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, sorted.count * 99 / 100)] * 1000
        print(
            String(
                format:
                    "backup under load: %d rows, full %d bytes in %.0f ms; commits median %.2f ms, p99 %.2f ms, longest during backups %.1f ms (overall %.1f ms); %d commits in total",
                rows, full.bytes, full.end.timeIntervalSince(full.start) * 1000, median, p99, worstDuringBackup, worstOverall,
                durations.count))
        for (previous, window) in zip(windows, windows.dropFirst()) {
            print(
                String(
                    format:
                        "  incremental: %d bytes (%.1f%% of full) for about %d commits since the previous generation, %.0f ms",
                    window.bytes, Double(window.bytes) * 100 / Double(full.bytes), window.commitsAfter - previous.commitsBefore,
                    window.end.timeIntervalSince(window.start) * 1000))
        }
    }
}
