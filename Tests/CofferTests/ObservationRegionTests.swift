import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Precise regions: an observation re-fetches only after commits that changed a column it read, in a row
/// it read. Fetches are counted; every wait is on a delivered value, never on time.
final class ObservationRegionTests: XCTestCase {
    private let delivery = DispatchQueue(label: "observation-region-test")

    private func makeDatabase() throws -> Database {
        var configuration = Configuration()
        // No other process here: the idle checkpoint's data_version move must not add a fetch.
        configuration.externalChangeLatency = 0
        let database = try Database.temporary(configuration: configuration)
        try database.write { db in
            try db.executeScript(
                """
                CREATE TABLE a(id INTEGER PRIMARY KEY, v INTEGER, w TEXT);
                CREATE TABLE log(id INTEGER PRIMARY KEY, note TEXT);
                CREATE TRIGGER a_w AFTER UPDATE OF w ON a BEGIN INSERT INTO log(note) VALUES ('w'); END;
                CREATE VIEW positive AS SELECT id, v FROM a WHERE v > 0;
                CREATE TABLE u(id INTEGER PRIMARY KEY, name TEXT UNIQUE, v INTEGER);
                INSERT INTO u(id, name, v) VALUES (1, 'one', 1), (2, 'two', 2);
                INSERT INTO a(id, v, w) VALUES (1, 10, 'x'), (2, 20, 'y'), (3, 30, 'z');
                """)
        }
        return database
    }

    /// Observes `sql`'s integer (bound to `arguments`), counting fetches.
    private func observe(
        _ database: Database, _ sql: String, _ arguments: StatementArguments = []
    ) -> (ObservationHandle, ObservedValues<Int>) {
        let observed = ObservedValues<Int>()
        let handle = database.observe(
            options: ObservationOptions(removesDuplicates: false, coalescingInterval: 0), on: delivery,
            { db in
                observed.noteFetch()
                return try db.fetchValue(Int.self, sql: sql, arguments: arguments) ?? -1
            }, onChange: { observed.append($0) })
        return (handle, observed)
    }

    func testUpdatesOfColumnsNotReadDoNotRefetch() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "read regions are calibrated on SQLite 3.15's authorizer callbacks; SQLite 3.49 reports some reads more coarsely (count(*), REPLACE), so observations re-fetch more often, never less"
            ))
        let database = try makeDatabase()
        let (handle, sum) = observe(database, "SELECT sum(v) FROM a")
        let (countHandle, count) = observe(database, "SELECT count(*) FROM a")
        XCTAssertTrue(sum.wait { values, _ in values == [60] })
        XCTAssertTrue(count.wait { values, _ in values == [3] })
        try database.write { try $0.execute(sql: "UPDATE a SET w = 'changed' WHERE id = 2") }
        try database.write { try $0.execute(sql: "UPDATE a SET v = 21 WHERE id = 2") }
        XCTAssertTrue(sum.wait { values, _ in values == [60, 61] }, "\(sum.values)")
        XCTAssertEqual(sum.fetchCount, 2, "the update of w, which sum(v) does not read, must not re-fetch it")
        // count(*) reads no column: no update concerns it, an insert does.
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (4, 0)") }
        XCTAssertTrue(count.wait { values, _ in values == [3, 4] }, "\(count.values)")
        XCTAssertEqual(count.fetchCount, 2)
        withExtendedLifetime((handle, countHandle)) {}
    }

    func testColumnsReadThroughAViewAndAWhereClauseCount() throws {
        let database = try makeDatabase()
        let (handle, positive) = observe(database, "SELECT count(*) FROM positive")
        XCTAssertTrue(positive.wait { values, _ in values == [3] })
        try database.write { try $0.execute(sql: "UPDATE a SET w = 'unread' WHERE id = 1") }
        try database.write { try $0.execute(sql: "UPDATE a SET v = -1 WHERE id = 1") }
        XCTAssertTrue(positive.wait { values, _ in values == [3, 2] }, "\(positive.values)")
        XCTAssertEqual(positive.fetchCount, 2, "the view reads v (in its WHERE), not w")
        withExtendedLifetime(handle) {}
    }

    func testPrimaryKeyLookupsRefetchOnlyForTheirRow() throws {
        let database = try makeDatabase()
        let (bound, byParameter) = observe(database, "SELECT v FROM a WHERE id = ?", [2])
        let (literal, byConstant) = observe(database, "SELECT v FROM a WHERE id = 3")
        XCTAssertTrue(byParameter.wait { values, _ in values == [20] })
        XCTAssertTrue(byConstant.wait { values, _ in values == [30] })
        try database.write { try $0.execute(sql: "UPDATE a SET v = 11 WHERE id = 1") }
        try database.write { try $0.execute(sql: "DELETE FROM a WHERE id = 1") }
        try database.write { try $0.execute(sql: "UPDATE a SET v = 22 WHERE id = 2") }
        try database.write { try $0.execute(sql: "UPDATE a SET v = 33 WHERE id = 3") }
        XCTAssertTrue(byParameter.wait { values, _ in values == [20, 22] }, "\(byParameter.values)")
        XCTAssertTrue(byConstant.wait { values, _ in values == [30, 33] }, "\(byConstant.values)")
        XCTAssertEqual(byParameter.fetchCount, 2, "rows 1 and 3 are not the row read")
        XCTAssertEqual(byConstant.fetchCount, 2)
        withExtendedLifetime((bound, literal)) {}
    }

    func testAMissingRowIsWatchedForItsInsertAndMovedRowsCount() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "read regions are calibrated on SQLite 3.15's authorizer callbacks; SQLite 3.49 reports some reads more coarsely (count(*), REPLACE), so observations re-fetch more often, never less"
            ))
        let database = try makeDatabase()
        let (handle, missing) = observe(database, "SELECT coalesce((SELECT v FROM a WHERE id = ?), -1)", [9])
        XCTAssertTrue(missing.wait { values, _ in values == [-1] })
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (8, 80)") }
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (9, 90)") }
        XCTAssertTrue(missing.wait { values, _ in values == [-1, 90] }, "\(missing.values)")
        XCTAssertEqual(missing.fetchCount, 2)
        // Changing a row's id: SQLite reports the new rowid only; the old one must still re-fetch.
        try database.write { try $0.execute(sql: "UPDATE a SET id = 19 WHERE id = 9") }
        XCTAssertTrue(missing.wait { values, _ in values == [-1, 90, -1] }, "\(missing.values)")
        withExtendedLifetime(handle) {}
    }

    func testRowsDeletedByAUniqueConflictCount() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "read regions are calibrated on SQLite 3.15's authorizer callbacks; SQLite 3.49 reports some reads more coarsely (count(*), REPLACE), so observations re-fetch more often, never less"
            ))
        let database = try makeDatabase()
        let (oneHandle, one) = observe(database, "SELECT coalesce((SELECT v FROM u WHERE id = 1), -1)")
        let (twoHandle, two) = observe(database, "SELECT coalesce((SELECT v FROM u WHERE id = ?), -1)", [2])
        XCTAssertTrue(one.wait { values, _ in values == [1] })
        XCTAssertTrue(two.wait { values, _ in values == [2] })
        // Row 1 goes (its name conflicts) and SQLite's update hook reports only row 3's insert.
        try database.write { try $0.execute(sql: "INSERT OR REPLACE INTO u(id, name, v) VALUES (3, 'one', 3)") }
        XCTAssertTrue(one.wait { values, _ in values == [1, -1] }, "\(one.values)")
        // Row 2 goes when row 3 takes its name; the hook reports row 3's update.
        try database.write { try $0.execute(sql: "UPDATE OR REPLACE u SET name = 'two' WHERE id = 3") }
        XCTAssertTrue(two.wait { values, _ in values.last == -1 }, "\(two.values)")
        // Both commits may have replaced row 1: one fetch each.
        XCTAssertTrue(one.wait { _, fetches in fetches == 3 })
        // An update of a column outside the unique index replaces nothing; an insert may.
        try database.write { try $0.execute(sql: "UPDATE u SET v = 30 WHERE id = 3") }
        try database.write { try $0.execute(sql: "INSERT INTO u(id, name, v) VALUES (1, 'uno', 11)") }
        XCTAssertTrue(one.wait { values, _ in values.last == 11 }, "\(one.values)")
        XCTAssertEqual(one.fetchCount, 4)
        withExtendedLifetime((oneHandle, twoHandle)) {}
    }

    func testChangeSetsNameTheColumnsUpdatesSet() throws {
        let database = try makeDatabase()
        let changes = CollectedChanges(database.changes())
        try database.write { db in
            try db.execute(sql: "UPDATE a SET w = 'n', v = v + 1 WHERE id = 1")
            try db.execute(sql: "INSERT INTO a(id, v) VALUES (5, 5)")
        }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE a SET v = 0 WHERE id = 2")
            try db.execute(sql: "UPDATE a SET v = 0 WHERE id = 3")
        }
        let received = changes.wait(for: 3)
        XCTAssertEqual(received.first?.rows.map(\.updatedColumns), [["v", "w"], nil, nil], "the trigger's insert has none")
        XCTAssertEqual(received.first?.rows.map(\.table), ["a", "log", "a"])
        // The second autocommit statement's set is published from inside SQLite's hook, where nothing can
        // be prepared: the statement seen before (same SQL text) is remembered, or the columns are unknown.
        for change in received.dropFirst() { XCTAssertTrue([["v"], nil].contains(change.rows.first?.updatedColumns)) }
    }

    func testRegionsOfStatementsAsSQLiteReportsThem() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "read regions are calibrated on SQLite 3.15's authorizer callbacks; SQLite 3.49 reports some reads more coarsely (count(*), REPLACE), so observations re-fetch more often, never less"
            ))
        let database = try makeDatabase()
        let recorder = ReadRegionRecorder()
        func region(_ sql: String, _ arguments: StatementArguments = []) throws -> ReadRegion {
            try database.read { db in try recorder.record(on: db) { _ = try db.fetchAll(sql: sql, arguments: arguments) }.1 }
        }
        XCTAssertEqual(try region("SELECT count(*) FROM a").tables?["a"], ReadRegion.Table(columns: [], rowIDs: nil))
        XCTAssertEqual(
            try region("SELECT w FROM a WHERE id = ?", [3]).tables?["a"], ReadRegion.Table(columns: ["w", "id"], rowIDs: [3]))
        XCTAssertEqual(try region("SELECT w FROM a WHERE id IN (1, 2)").tables?["a"]?.rowIDs, nil, "a loop over a list: any row")
        XCTAssertEqual(
            try region("SELECT * FROM a WHERE v > 5").tables?["a"], ReadRegion.Table(columns: ["id", "v", "w"], rowIDs: nil))
        XCTAssertNil(try region("SELECT count(*) FROM sqlite_temp_master").tables, "another schema: anything")
    }
}
