import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `makeSnapshot()` reads one committed state across reads and awaits while the writer commits.
final class DatabaseSnapshotTests: XCTestCase {
    private func makeDatabase(readers: Int = 2) throws -> (TemporaryDirectory, Database) {
        let directory = try TemporaryDirectory()
        var configuration = Configuration(encryption: .passphrase("snapshot"))
        configuration.readerCount = readers
        let database = try Database(path: directory.path("snapshot.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO note(text) VALUES ('a'), ('b')")
        }
        return (directory, database)
    }

    private func count(_ db: Connection) throws -> Int? { try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
    private static func count(_ snapshot: DatabaseSnapshot) throws -> Int? {
        try snapshot.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
    }
    private static func count(_ database: Database) throws -> Int? {
        try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
    }

    func testASnapshotStaysFixedWhileTheWriterCommits() async throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        for round in 0..<20 {
            try await database.write { db in try db.execute(sql: "INSERT INTO note(text) VALUES ('c')") }
            let seen = try await snapshot.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
            XCTAssertEqual(seen, 2, "round \(round)")
            XCTAssertEqual(try Self.count(snapshot), 2)
            XCTAssertEqual(try Self.count(database), 3 + round)
        }
        snapshot.close()
        XCTAssertFalse(snapshot.isOpen)
        XCTAssertThrowsError(try Self.count(snapshot)) {
            XCTAssertEqual(($0 as? CofferError)?.code, .apiMisuse)
        }
    }

    func testClosingGivesTheReaderBack() throws {
        let (directory, database) = try makeDatabase(readers: 1)
        defer { withExtendedLifetime(directory) {} }
        for _ in 0..<5 {
            let snapshot = try database.makeSnapshot()
            XCTAssertEqual(try snapshot.read { try self.count($0) }, 2)
            snapshot.close()
            // With one reader, this read would wait forever for a snapshot that kept it.
            XCTAssertEqual(try database.read { try self.count($0) }, 2)
        }
        do {
            // Released without close(): deinit gives it back.
            _ = try database.makeSnapshot()
        }
        XCTAssertEqual(try database.read { try self.count($0) }, 2)
    }

    func testClosingTheDatabaseEndsItsSnapshots() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        try database.close()
        XCTAssertFalse(snapshot.isOpen)
        XCTAssertThrowsError(try snapshot.read { try self.count($0) })
    }

    func testAPassphraseChangeEndsItsSnapshots() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        try database.changePassphrase(to: .passphrase("snapshot 2"))
        XCTAssertFalse(snapshot.isOpen)
        XCTAssertEqual(try database.read { try self.count($0) }, 2)
    }

    /// Snapshots made and closed in a loop on one thread while another changes the key 40 times (each change
    /// drains the readers): no drain waits for a snapshot that registered too late, and every snapshot made
    /// either reads or fails with `.busy` (made during a drain) — nothing hangs.
    func testSnapshotsMadeDuringKeyChangesNeverHoldUpTheDrain() throws {
        let (directory, database) = try makeDatabase()
        defer { withExtendedLifetime(directory) {} }
        final class Stop: @unchecked Sendable {
            let lock = NSLock()
            var stopped = false
            var made = 0
            var unexpected: [String] = []
        }
        let stop = Stop()
        let snapshots = Thread {
            while !stop.lock.withLock({ stop.stopped }) {
                do {
                    let snapshot = try database.makeSnapshot()
                    _ = try? Self.count(snapshot)
                    snapshot.close()
                    stop.lock.withLock { stop.made += 1 }
                } catch CofferError.busy {
                } catch {
                    stop.lock.withLock { stop.unexpected.append("\(error)") }
                }
            }
        }
        snapshots.start()
        let keys = (0..<2).map { Encryption.rawKey(Data(repeating: UInt8(0x41 + $0), count: 32)) }
        let done = DispatchSemaphore(value: 0)
        let rekeys = Thread {
            for round in 0..<40 { try? database.changePassphrase(to: keys[round % 2]) }
            done.signal()
        }
        rekeys.start()
        let finished = done.wait(timeout: .now() + 120) == .success
        stop.lock.withLock { stop.stopped = true }
        XCTAssertTrue(finished, "a key change waited for a snapshot's reader forever")
        guard finished else { return }
        while snapshots.isExecuting { usleep(1000) }
        XCTAssertEqual(stop.unexpected, [])
        XCTAssertGreaterThan(stop.made, 0)
        XCTAssertEqual(try Self.count(database), 2)
    }

    func testConcurrentSnapshotReadsSeeOneState() throws {
        let (directory, database) = try makeDatabase(readers: 3)
        defer { withExtendedLifetime(directory) {} }
        let snapshot = try database.makeSnapshot()
        let group = DispatchGroup()
        let failures = NSLock()
        nonisolated(unsafe) var wrong = 0
        DispatchQueue.global().async(group: group) {
            for _ in 0..<200 { try? database.write { db in try db.execute(sql: "INSERT INTO note(text) VALUES ('x')") } }
        }
        for _ in 0..<3 {
            DispatchQueue.global().async(group: group) {
                for _ in 0..<100 {
                    let seen = try? snapshot.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
                    if seen != 2 { failures.withLock { wrong += 1 } }
                }
            }
        }
        group.wait()
        XCTAssertEqual(failures.withLock { wrong }, 0)
        snapshot.close()
    }

    func testInMemoryDatabasesHaveNoSnapshots() throws {
        let database = try Database.inMemory()
        XCTAssertThrowsError(try database.makeSnapshot()) { XCTAssertEqual(($0 as? CofferError)?.code, .apiMisuse) }
    }
}
