import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The observation center tells each subscriber only of the commits to the tables it follows (all of them
/// for a commit that may have changed anything), in subscription order; an observation whose fetch reads
/// other tables from one value to the next follows its new tables.
final class ObservationSubscriberIndexTests: XCTestCase {
    private func makeDatabase() throws -> Database {
        var configuration = Configuration()
        // No other process here: the idle checkpoint's data_version move must not add a fetch.
        configuration.externalChangeLatency = 0
        let database = try Database.temporary(configuration: configuration)
        try database.write { db in
            try db.executeScript(
                """
                CREATE TABLE a(id INTEGER PRIMARY KEY, v INTEGER);
                CREATE TABLE b(id INTEGER PRIMARY KEY, v INTEGER);
                CREATE TABLE choice(id INTEGER PRIMARY KEY, name TEXT);
                INSERT INTO choice(id, name) VALUES (1, 'a');
                """)
        }
        return database
    }

    func testSubscribersAreToldOfTheirTablesInSubscriptionOrder() throws {
        let database = try makeDatabase()
        let told = ObservedValues<Int>()
        let center = database.observation
        var ids: [Int] = []
        for (number, tables) in [(1, ["a"]), (2, nil), (3, ["b"]), (4, ["a", "b"])] as [(Int, Set<String>?)] {
            ids.append(try XCTUnwrap(center.subscribe(.rows, tables: tables) { _ in told.append(number) }))
        }
        defer { ids.forEach(center.unsubscribe) }
        /// Who was told of `sql`'s commit (publishing happens on the writer's queue before `write` returns).
        func commit(_ sql: String) throws -> [Int] {
            let before = told.values.count
            try database.write { try $0.executeScript(sql) }
            return Array(told.values.dropFirst(before))
        }
        XCTAssertEqual(try commit("INSERT INTO a(v) VALUES (1)"), [1, 2, 4])
        XCTAssertEqual(try commit("INSERT INTO b(v) VALUES (1)"), [2, 3, 4])
        XCTAssertEqual(try commit("INSERT INTO choice(name) VALUES ('c')"), [2])
        XCTAssertEqual(try commit("INSERT INTO b(v) VALUES (2); INSERT INTO a(v) VALUES (2)"), [1, 2, 3, 4])
        XCTAssertEqual(try commit("CREATE TABLE c(id INTEGER PRIMARY KEY)"), [1, 2, 3, 4], "a schema change concerns everyone")
        center.setTables(["b"], for: ids[0])
        center.setTables(["choice"], for: ids[1])
        XCTAssertEqual(try commit("INSERT INTO a(v) VALUES (3)"), [4])
        XCTAssertEqual(try commit("INSERT INTO b(v) VALUES (3)"), [1, 3, 4])
        center.setTables(nil, for: ids[2])
        XCTAssertEqual(try commit("INSERT INTO choice(name) VALUES ('d')"), [2, 3])
    }

    func testAnObservationFollowsTheTablesItsLastFetchRead() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "read regions are calibrated on SQLite 3.15's authorizer callbacks; SQLite 3.49 reports some reads more coarsely (count(*), REPLACE), so observations re-fetch more often, never less"
            ))
        let database = try makeDatabase()
        let observed = ObservedValues<Int>()
        let handle = database.observe(
            options: ObservationOptions(removesDuplicates: false, coalescingInterval: 0), on: DispatchQueue(label: "index-test"),
            { db in
                observed.noteFetch()
                let table = try db.fetchValue(String.self, sql: "SELECT name FROM choice WHERE id = 1") ?? "a"
                return try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(table)") ?? -1
            }, onChange: { observed.append($0) })
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        try database.write { try $0.execute(sql: "INSERT INTO b(v) VALUES (1), (2)") }
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1] })
        XCTAssertEqual(observed.fetchCount, 2, "the commit to b must not re-fetch while only a is read")
        try database.write { try $0.execute(sql: "UPDATE choice SET name = 'b' WHERE id = 1") }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1, 2] })
        try database.write { try $0.execute(sql: "INSERT INTO b(v) VALUES (3)") }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1, 2, 3] }, "b is followed once the fetch reads it")
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (2)") }
        try database.write { try $0.execute(sql: "INSERT INTO b(v) VALUES (4)") }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1, 2, 3, 4] })
        XCTAssertEqual(observed.fetchCount, 5, "a is no longer read: its commit must not re-fetch")
        withExtendedLifetime(handle) {}
    }

    /// A database with one subscriber, following table b only; what it is told; its id.
    private func followingB() throws -> (Database, ObservedValues<DatabaseChangeSet>, Int) {
        let database = try makeDatabase()
        let told = ObservedValues<DatabaseChangeSet>()
        let id = try XCTUnwrap(database.observation.subscribe(.rows, tables: ["b"]) { told.append($0) })
        return (database, told, id)
    }

    /// Rows of a table nobody follows are not collected: such a commit is told to nobody and keeps its
    /// place in the sequence.
    func testACommitToTablesNobodyFollowsIsSkippedAndCounted() throws {
        let (database, told, id) = try followingB()
        defer { database.observation.unsubscribe(id) }
        try database.write { try $0.execute(sql: "INSERT INTO b(v) VALUES (1)") }
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        try database.write { try $0.executeScript("INSERT INTO b(v) VALUES (2); INSERT INTO a(v) VALUES (2)") }
        XCTAssertEqual(told.values.map(\.sequence), [1, 3])
        XCTAssertEqual(told.values.map { $0.rows.map(\.table) }, [["b"], ["b"]], "rows of a are not collected")
        XCTAssertFalse(told.values.contains { $0.isWholeDatabase })
    }

    /// The race a skipped table opens: a transaction writes table a while nobody follows it, and a subscriber
    /// starts following a (and reads it) before the transaction commits — `setTables`, as an observation's
    /// fetch widens, does not wait for the writer (`subscribe` does). The commit must reach it; it is
    /// published as a change to the whole database, since a's rows were not collected.
    func testATableFollowedWhileATransactionSkippedItsRowsIsTold() throws {
        let (database, told, id) = try followingB()
        defer { database.observation.unsubscribe(id) }
        let wrote = DispatchSemaphore(value: 0)
        let commit = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            try? database.write { db in
                try db.execute(sql: "INSERT INTO a(v) VALUES (1)")
                wrote.signal()
                commit.wait()
            }
            done.signal()
        }
        XCTAssertEqual(wrote.wait(timeout: .now() + 10), .success)
        database.observation.setTables(["a", "b"], for: id)
        // What the new subscriber reads first: the state before the open transaction commits.
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM a") }, 0)
        commit.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 10), .success)
        XCTAssertEqual(told.values.count, 1, "the commit after the subscriber's read reaches it")
        XCTAssertTrue(told.values.first?.touches(lowercased: ["a"]) ?? false)
        XCTAssertEqual(told.values.first?.isWholeDatabase, true)
        // The next commit to a, a followed table from its start, is collected row by row.
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (2)") }
        XCTAssertEqual(told.values.last?.rows.map(\.rowID), [2])
        XCTAssertEqual(told.values.last?.isWholeDatabase, false)
    }
}
