import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `observe(from: snapshot)`: the first value is the snapshot's state, and no commit after the snapshot —
/// this process's or another's, before or after the observation starts — is missed.
final class SnapshotObservationTests: XCTestCase {
    private let queue = DispatchQueue(label: "snapshot-observation-tests")

    /// A plaintext database (so Python's sqlite3 can write to it too) with `note` holding `rows` rows.
    private func makeDatabase(_ directory: TemporaryDirectory, rows: Int) throws -> Database {
        let database = try Database(path: directory.path("notes.db"), configuration: Configuration())
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            for row in 0..<rows { try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["note \(row)"]) }
        }
        return database
    }

    private func insert(_ database: Database, _ count: Int) throws {
        try database.write { db in
            for _ in 0..<count { try db.execute(sql: "INSERT INTO note(text) VALUES ('later')") }
        }
    }

    private func observeCount(_ database: Database, from snapshot: DatabaseSnapshot, into values: ObservedValues<Int>)
        -> ObservationHandle
    {
        database.observe(
            from: snapshot, on: queue,
            { db in
                values.noteFetch()
                return try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? -1
            }, onChange: { values.append($0) })
    }

    func testTheFirstValueIsTheSnapshotsAndTheCommitsSinceFollow() throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 3)
        defer { try? database.close() }
        let snapshot = try database.makeSnapshot()
        try insert(database, 2)  // before the observation: announced to nobody
        let values = ObservedValues<Int>()
        let handle = observeCount(database, from: snapshot, into: values)
        defer { handle.cancel() }
        XCTAssertTrue(values.wait { values, _ in values == [3, 5] }, "\(values.values)")
        snapshot.close()  // read once: the observation no longer needs it
        try insert(database, 1)
        XCTAssertTrue(values.wait { values, _ in values == [3, 5, 6] }, "\(values.values)")
    }

    func testWithoutACommitSinceTheSnapshotTheValueComesOnce() throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 3)
        defer { try? database.close() }
        let snapshot = try database.makeSnapshot()
        defer { snapshot.close() }
        let values = ObservedValues<Int>()
        let handle = observeCount(database, from: snapshot, into: values)
        defer { handle.cancel() }
        // The snapshot's fetch and the current state's: equal, so delivered once.
        XCTAssertTrue(values.wait { _, fetches in fetches >= 2 })
        queue.sync {}
        XCTAssertEqual(values.values, [3])
        try insert(database, 1)
        XCTAssertTrue(values.wait { values, _ in values == [3, 4] }, "\(values.values)")
    }

    func testAnotherProcesssCommitBeforeTheObservationIsNotMissed() throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 3)
        defer { try? database.close() }
        let snapshot = try database.makeSnapshot()
        defer { snapshot.close() }
        let script = """
            import sqlite3, sys
            db = sqlite3.connect(sys.argv[1])
            db.executemany("INSERT INTO note(text) VALUES (?)", [("python %d" % i,) for i in range(4)])
            db.commit()
            """
        let result = try Shell.run("/usr/bin/env", ["python3", "-c", script, database.path])
        XCTAssertEqual(result.status, 0, result.stderr)
        let values = ObservedValues<Int>()
        let handle = observeCount(database, from: snapshot, into: values)
        defer { handle.cancel() }
        XCTAssertTrue(values.wait { values, _ in values == [3, 7] }, "\(values.values)")
    }

    func testASnapshotOfAnotherDatabaseIsAnError() throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 1)
        defer { try? database.close() }
        let other = try Database(path: directory.path("other.db"), configuration: Configuration())
        defer { try? other.close() }
        try other.write { db in try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)") }
        let snapshot = try other.makeSnapshot()
        defer { snapshot.close() }
        let errors = ObservedValues<String>()
        let handle = database.observe(
            from: snapshot, on: queue, { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? -1 },
            onError: { errors.append("\(($0 as? CofferError)?.code == .apiMisuse)") }, onChange: { _ in })
        defer { handle.cancel() }
        XCTAssertTrue(errors.wait { values, _ in values == ["true"] }, "\(errors.values)")
    }

    func testTheAsyncSequenceStartsFromTheSnapshot() async throws {
        let directory = try TemporaryDirectory()
        let database = try makeDatabase(directory, rows: 2)
        defer { try? database.close() }
        let snapshot = try database.makeSnapshot()
        defer { snapshot.close() }
        var iterator = database.observe(from: snapshot) { db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") ?? -1
        }.makeAsyncIterator()
        let first = try await iterator.next()
        XCTAssertEqual(first, 2, "no commit since the snapshot: its value")
        try await database.write { db in try db.execute(sql: "INSERT INTO note(text) VALUES ('later')") }
        let second = try await iterator.next()
        XCTAssertEqual(second, 3)
    }
}
