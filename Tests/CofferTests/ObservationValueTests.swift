import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `Database.observe`: the value at start and after each commit that touched what the fetch read.
final class ObservationValueTests: XCTestCase {
    private let delivery = DispatchQueue(label: "observation-test")

    private func makeDatabase(_ configuration: Configuration? = nil, path: String? = nil) throws -> Database {
        let database =
            if let path { try Database(path: path, configuration: configuration ?? Configuration()) } else {
                try Database.temporary()
            }
        try database.write { db in
            try db.executeScript(
                """
                CREATE TABLE IF NOT EXISTS a(id INTEGER PRIMARY KEY, v INTEGER);
                CREATE TABLE IF NOT EXISTS b(id INTEGER PRIMARY KEY, v INTEGER);
                CREATE VIEW IF NOT EXISTS big_a AS SELECT id FROM a WHERE v > 100;
                """)
        }
        return database
    }

    /// Observes `sql`'s single integer on the test's delivery queue.
    private func observeCount(
        _ database: Database, _ sql: String, options: ObservationOptions = ObservationOptions()
    ) -> (ObservationHandle, ObservedValues<Int>) {
        let observed = ObservedValues<Int>()
        let handle = database.observe(
            options: options, on: delivery,
            { db in
                observed.noteFetch()
                return try db.fetchValue(Int.self, sql: sql) ?? 0
            }, onChange: { observed.append($0) })
        return (handle, observed)
    }

    func testRefetchesOnlyAfterCommitsToTheTablesRead() throws {
        let database = try makeDatabase()
        let (handle, observed) = observeCount(database, "SELECT count(*) FROM a")
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        try database.write { try $0.execute(sql: "INSERT INTO b(v) VALUES (1)") }
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1] })
        XCTAssertEqual(observed.fetchCount, 2, "the commit to b must not re-fetch a count of a")
        withExtendedLifetime(handle) {}
    }

    func testViewsAndJoinsAreFollowedToTheirTables() throws {
        let database = try makeDatabase()
        let (viewHandle, throughView) = observeCount(database, "SELECT count(*) FROM big_a")
        let (joinHandle, throughJoin) = observeCount(database, "SELECT count(*) FROM a JOIN b USING (id)")
        XCTAssertTrue(throughView.wait { values, _ in values == [0] })
        XCTAssertTrue(throughJoin.wait { values, _ in values == [0] })
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (1, 500)") }
        try database.write { try $0.execute(sql: "INSERT INTO b(id, v) VALUES (1, 1)") }
        XCTAssertTrue(throughView.wait { values, _ in values.last == 1 })
        XCTAssertTrue(throughJoin.wait { values, _ in values.last == 1 })
        withExtendedLifetime((viewHandle, joinHandle)) {}
    }

    func testDuplicatesAreSkippedButStillFetched() throws {
        let database = try makeDatabase()
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (1, 1)") }
        let (handle, observed) = observeCount(database, "SELECT count(*) FROM a WHERE v > 0")
        XCTAssertTrue(observed.wait { values, _ in values == [1] })
        // The query reads `v`, so the update re-fetches; the count stays 1 and is not delivered again.
        try database.write { try $0.execute(sql: "UPDATE a SET v = 2 WHERE id = 1") }
        XCTAssertTrue(observed.wait { _, fetches in fetches == 2 })
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (2, 1)") }
        XCTAssertTrue(observed.wait { values, _ in values.last == 2 })
        delivery.sync {}
        XCTAssertEqual(observed.values, [1, 2])
        withExtendedLifetime(handle) {}
    }

    func testFirstValueCanBeDeliveredSynchronously() throws {
        let database = try makeDatabase()
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        let (handle, observed) = observeCount(
            database, "SELECT count(*) FROM a", options: ObservationOptions(deliversFirstValueSynchronously: true))
        XCTAssertEqual(observed.values, [1])
        withExtendedLifetime(handle) {}
    }

    func testCancelledObservationDeliversNothingMore() throws {
        let database = try makeDatabase()
        let (handle, observed) = observeCount(database, "SELECT count(*) FROM a")
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        handle.cancel()
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        // A second observation sees the commit; by then the first would have fetched it too.
        let (other, witness) = observeCount(database, "SELECT count(*) FROM a")
        XCTAssertTrue(witness.wait { values, _ in values == [1] })
        delivery.sync {}
        XCTAssertEqual(observed.values, [0])
        XCTAssertEqual(observed.fetchCount, 1)
        withExtendedLifetime(other) {}
    }

    func testAsyncSequenceFollowsCommitsAndEndsWithItsTask() async throws {
        let database = try makeDatabase()
        let titles = database.observe { db in
            try db.fetchAll(sql: "SELECT v FROM a ORDER BY id").map { try $0.decode(Int.self, at: 0) }
        }
        var seen: [[Int]] = []
        for try await value in titles {
            seen.append(value)
            if value.count == 3 { break }
            let next = value.count + 1
            try await database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (?)", arguments: [next]) }
        }
        XCTAssertEqual(seen, [[], [1], [1, 2], [1, 2, 3]])
    }

    func testObservationSurvivesRekeyAndCheckpoints() throws {
        let directory = try TemporaryDirectory()
        var configuration = Configuration(encryption: .rawKey(Data(repeating: 1, count: 32)))
        configuration.idleCheckpointDelay = 0.01
        let database = try makeDatabase(configuration, path: directory.path("rekey.db"))
        let (handle, observed) = observeCount(database, "SELECT count(*) FROM a")
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        XCTAssertTrue(observed.wait { values, _ in values.last == 1 })
        try database.changePassphrase(to: .rawKey(Data(repeating: 2, count: 32)))
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (2)") }
        XCTAssertTrue(observed.wait { values, _ in values.last == 2 })
        try database.checkpoint(.truncate)
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (3)") }
        try database.checkpoint(.passive)
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (4)") }
        XCTAssertTrue(observed.wait { values, _ in values.last == 4 })
        let values = observed.values
        XCTAssertEqual(values, values.sorted(), "values went back in time: \(values)")
        withExtendedLifetime(handle) {}
    }

    func testInMemoryDatabasesObserveOnTheirOneConnection() throws {
        let database = try Database.inMemory()
        try database.write { try $0.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY)") }
        let changes = CollectedChanges(database.changes(in: ["a"]))
        let (handle, observed) = observeCount(database, "SELECT count(*) FROM a")
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        try database.write { db in
            try db.execute(sql: "INSERT INTO a(id) VALUES (1)")
            try? db.savepoint {
                try db.execute(sql: "INSERT INTO a(id) VALUES (2)")
                throw CancellationError()
            }
        }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1] })
        XCTAssertEqual(changes.wait(for: 1).first?.rows.map(\.rowID), [1], "the savepoint's row was rolled back")
        withExtendedLifetime(handle) {}
    }
}
