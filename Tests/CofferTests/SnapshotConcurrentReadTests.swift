import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `DatabaseSnapshot.concurrentRead`: several readers at once on one snapshot's state through
/// `sqlite3_snapshot_open`, where the library has it (SQLCipher 4), and a typed error where it does not.
final class SnapshotConcurrentReadTests: XCTestCase {
    private func makeDatabase(readers: Int) throws -> (TemporaryDirectory, Database) {
        let directory = try TemporaryDirectory()
        var configuration = Configuration(encryption: .passphrase("snapshot"))
        configuration.readerCount = readers
        let database = try Database(path: directory.path("snapshot.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            for index in 0..<100 { try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["n\(index)"]) }
        }
        return (directory, database)
    }

    private static func count(_ db: Connection) throws -> Int {
        try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? -1
    }

    func testConcurrentReadsRunAtOnceAndAllSeeTheSnapshotsState() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.snapshots), "SQLite \(LinkedSQLite.version) has no sqlite3_snapshot_open")
        let (directory, database) = try makeDatabase(readers: 4)
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        for round in 0..<5 {
            try database.write { db in
                try db.execute(sql: "INSERT INTO note(text) VALUES ('later')")
                try db.execute(sql: "DELETE FROM note WHERE id = ?", arguments: [round + 1])
            }
            // Three readers at once: each waits inside its read until all three are in.
            let inside = DispatchGroup()
            for _ in 0..<3 { inside.enter() }
            let results = LockedBox<[Int]>([])
            let release = DispatchSemaphore(value: 0)
            let finished = DispatchGroup()
            for _ in 0..<3 {
                // Threads of their own: concurrentPerform would run only as many at once as there are cores.
                finished.enter()
                Thread {
                    defer { finished.leave() }
                    do {
                        let seen = try snapshot.concurrentRead { db -> Int in
                            let before = try Self.count(db)
                            inside.leave()
                            guard release.wait(timeout: .now() + 20) == .success else { return -4 }
                            // The commit made meanwhile changes nothing in this read.
                            return try Self.count(db) == before ? before : -2
                        }
                        results.withValue { $0.append(seen) }
                    } catch {
                        results.withValue { $0.append(-3) }
                    }
                }.start()
            }
            // All three are inside their reads at once (with one reader each): commit, then let them go on.
            XCTAssertEqual(inside.wait(timeout: .now() + 20), .success, "round \(round): not all three at once")
            try database.write { db in try db.execute(sql: "INSERT INTO note(text) VALUES ('meanwhile')") }
            for _ in 0..<3 { release.signal() }
            finished.wait()
            try database.write { db in try db.execute(sql: "DELETE FROM note WHERE text = 'meanwhile'") }
            XCTAssertEqual(results.value, [100, 100, 100], "round \(round)")
            XCTAssertEqual(try snapshot.read { try Self.count($0) }, 100)
            XCTAssertEqual(try database.read { try Self.count($0) }, 100, "one in, one out each round")
            XCTAssertEqual(
                try snapshot.concurrentRead { try $0.fetchValue(Int.self, sql: "SELECT min(id) FROM note") }, 1,
                "the deleted rows are still in the snapshot's state")
        }
        snapshot.close()
        XCTAssertThrowsError(try snapshot.concurrentRead { try Self.count($0) }) {
            XCTAssertEqual(($0 as? CofferError)?.code, .apiMisuse)
        }
        XCTAssertEqual(try database.read { try Self.count($0) }, 100)
    }

    func testAsyncConcurrentReadSeesTheSnapshot() async throws {
        try XCTSkipUnless(LinkedSQLite.supports(.snapshots), "SQLite \(LinkedSQLite.version) has no sqlite3_snapshot_open")
        let (directory, database) = try makeDatabase(readers: 3)
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        try await database.write { db in try db.execute(sql: "DELETE FROM note") }
        async let first = snapshot.concurrentRead { try Self.count($0) }
        async let second = snapshot.concurrentRead { try Self.count($0) }
        let seen = try await [first, second]
        XCTAssertEqual(seen, [100, 100])
        snapshot.close()
        let now = try await database.read { try Self.count($0) }
        XCTAssertEqual(now, 0)
    }

    func testConcurrentReadNeedsTwoReadersAndTheFeature() throws {
        let (directory, database) = try makeDatabase(readers: 1)
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        defer { snapshot.close() }
        XCTAssertThrowsError(try snapshot.concurrentRead { try Self.count($0) }) { error in
            let code = (error as? CofferError)?.code
            if LinkedSQLite.supports(.snapshots) {
                XCTAssertEqual(code, .apiMisuse, "\(error)")
            } else {
                XCTAssertEqual(code, .unsupportedByLibrary, "\(error)")
                XCTAssertTrue("\(error)".contains(LinkedSQLite.version), "\(error)")
            }
        }
        XCTAssertEqual(try snapshot.read { try Self.count($0) }, 100, "the snapshot itself still reads")
    }
}

/// A value shared by threads, behind a lock.
private final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value { lock.withLock { stored } }
    func withValue(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
