import Coffer
import CofferEngine
import CofferTestSupport
import Foundation
import XCTest

/// `changePassphraseWithProgress`: pages re-encrypted as the rollback journal fills, a last `.finished`
/// event, the new key (and only it) opening the file; a stop before the rewrite changes nothing.
final class RekeyProgressTests: XCTestCase {
    private static let rows = 12_000

    /// A database of `rows` rows of 400 bytes under the passphrase "old", and a checksum of its rows.
    private func makeDatabase(_ directory: TemporaryDirectory) throws -> (Database, String) {
        let database = try Database(
            path: directory.path("rekey.db"), configuration: Configuration(encryption: .passphrase("old")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
            for id in 0..<Self.rows {
                try db.execute(
                    sql: "INSERT INTO item(id, body) VALUES (?, ?)",
                    arguments: [id, Data((0..<400).map { UInt8(truncatingIfNeeded: id &* 31 &+ $0) })])
            }
        }
        return (database, try checksum(database))
    }

    private func checksum(_ database: Database) throws -> String {
        try database.read { db in
            try db.fetchValue(
                String.self, sql: "SELECT count(*) || ':' || sum(length(body)) || ':' || sum(id * unicode(hex(body))) FROM item")
        } ?? ""
    }

    /// True when `passphrase` opens the file at `path` (a second, independent `Database`).
    private func opens(_ path: String, with passphrase: String) -> Bool {
        do {
            let other = try Database(path: path, configuration: Configuration(encryption: .passphrase(passphrase)))
            defer { try? other.close() }
            _ = try other.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }
            return true
        } catch {
            return false
        }
    }

    func testARekeyReportsItsPagesAndFinishesUnderTheNewKey() async throws {
        let directory = try TemporaryDirectory()
        let (database, before) = try makeDatabase(directory)
        defer { try? database.close() }
        let pageCount = try await database.read { db in try db.fetchValue(Int.self, sql: "PRAGMA page_count") } ?? 0
        XCTAssertGreaterThan(pageCount, 1_000)
        var events: [(completed: Int, total: Int)] = []
        var finished: Int?
        for try await event in database.changePassphraseWithProgress(to: .passphrase("new")) {
            switch event {
            case .progress(let completed, let total): events.append((completed, total))
            case .finished(let pages): finished = pages
            }
        }
        XCTAssertEqual(finished, pageCount)
        XCTAssertEqual(events.first?.completed, 0)
        XCTAssertEqual(events.last?.completed, pageCount)
        XCTAssertTrue(events.allSatisfy { $0.total == pageCount && $0.completed <= pageCount })
        XCTAssertEqual(events.map(\.completed), events.map(\.completed).sorted(), "never backwards")
        // SQLCipher's rewrite of 1,339 pages takes about 80 ms here (C code, the same in debug builds): the
        // 20 ms polls see the journal part-filled (seen: [0, 519, 892, 1310, 1339], [0, 444, 745, 1052, 1330, 1339]).
        XCTAssertGreaterThan(events.filter { $0.completed > 0 && $0.completed < pageCount }.count, 0)
        // The live database reads and writes on under the new key; only the new key opens the file.
        XCTAssertEqual(try checksum(database), before)
        try await database.write { db in try db.execute(sql: "DELETE FROM item WHERE id = 0") }
        let mode = try await database.read { db in try db.fetchValue(String.self, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(mode, "wal")
        XCTAssertTrue(opens(database.path, with: "new"))
        XCTAssertFalse(opens(database.path, with: "old"))
    }

    func testStoppingBeforeTheRewriteKeepsTheOldKey() async throws {
        let directory = try TemporaryDirectory()
        let (database, before) = try makeDatabase(directory)
        defer { try? database.close() }
        // The writer is busy, so the rekey waits for it; the consumer stops meanwhile.
        let writing = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let writer = Thread {
            try? database.write { _ in
                writing.signal()
                release.wait()
            }
        }
        writer.start()
        writing.wait()
        let consumer = Task {
            var events = 0
            for try await _ in database.changePassphraseWithProgress(to: .passphrase("new")) { events += 1 }
            return events
        }
        // Stop once the rekey has suspended the readers and waits for the writer (its call is queued).
        let deadline = Date().addingTimeInterval(10)
        while !database.writer.hasQueuedCallers && Date() < deadline { try await Task.sleep(nanoseconds: 1_000_000) }
        XCTAssertTrue(database.writer.hasQueuedCallers, "the rekey waits for the writer")
        consumer.cancel()
        _ = try? await consumer.value
        release.signal()
        // The stopped rekey gets the writer after that write, sees the stop and changes nothing; the readers
        // it suspended resume when it returns, so this read waits for it.
        try await database.read { _ in }
        XCTAssertEqual(try checksum(database), before)
        let mode = try await database.read { db in try db.fetchValue(String.self, sql: "PRAGMA journal_mode") }
        XCTAssertEqual(mode, "wal", "the writer is back in WAL mode")
        try await database.write { db in try db.execute(sql: "DELETE FROM item WHERE id = 1") }
        XCTAssertTrue(opens(database.path, with: "old"))
        XCTAssertFalse(opens(database.path, with: "new"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: database.path + "-journal"))
    }
}
