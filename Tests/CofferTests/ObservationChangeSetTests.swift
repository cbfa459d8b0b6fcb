import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `Database.changes(in:)`: per-commit change sets from the writer's hooks, in commit order, with
/// rolled-back transactions and savepoints left out.
final class ObservationChangeSetTests: XCTestCase {
    struct Boom: Error {}

    private func makeDatabase() throws -> Database {
        let database = try Database.temporary()
        try database.write { db in
            try db.executeScript(
                "CREATE TABLE a(id INTEGER PRIMARY KEY, v INTEGER); CREATE TABLE b(id INTEGER PRIMARY KEY, v INTEGER)")
        }
        return database
    }

    private func rows(_ change: DatabaseChangeSet) -> [String] {
        change.rows.map { "\($0.table) \($0.rowID) \($0.kind)" }
    }

    func testEachCommitIsOneChangeSetInCommitOrder() throws {
        let database = try makeDatabase()
        let changes = CollectedChanges(database.changes(in: ["A"]))
        try database.write { db in
            try db.execute(sql: "INSERT INTO a(id, v) VALUES (1, 10), (2, 20)")
            try db.execute(sql: "INSERT INTO b(id, v) VALUES (7, 70)")
        }
        try database.write { try $0.execute(sql: "INSERT INTO b(id, v) VALUES (8, 80)") }  // no row of a: skipped
        try database.write { db in
            try db.execute(sql: "UPDATE a SET v = 11 WHERE id = 1")
            try db.execute(sql: "DELETE FROM a WHERE id = 2")
        }
        let received = changes.wait(for: 2)
        XCTAssertEqual(received.map(rows), [["a 1 insert", "a 2 insert"], ["a 1 update", "a 2 delete"]])
        XCTAssertEqual(received.map(\.sequence), [1, 3])
        XCTAssertFalse(received.contains { $0.isWholeDatabase || $0.isExternal })
    }

    func testRolledBackTransactionsAndSavepointsPublishNothing() throws {
        let database = try makeDatabase()
        let changes = CollectedChanges(database.changes())
        XCTAssertThrowsError(
            try database.write { db in
                try db.execute(sql: "INSERT INTO a(id, v) VALUES (1, 1)")
                throw Boom()
            })
        try database.write { db in
            try db.execute(sql: "INSERT INTO a(id, v) VALUES (2, 2)")
            try? db.savepoint {
                try db.execute(sql: "INSERT INTO a(id, v) VALUES (3, 3)")
                try db.savepoint { try db.execute(sql: "INSERT INTO b(id, v) VALUES (4, 4)") }
                throw Boom()
            }
            // Raw SQL savepoints, with quoted and differently cased names.
            try db.execute(sql: "SAVEPOINT \"Outer\"")
            try db.execute(sql: "INSERT INTO a(id, v) VALUES (5, 5)")
            try db.execute(sql: "savepoint inner")
            try db.execute(sql: "UPDATE a SET v = 50 WHERE id = 5")
            try db.execute(sql: "rollback transaction to outer")
            try db.execute(sql: "UPDATE a SET v = 20 WHERE id = 2")
            try db.execute(sql: "RELEASE outer")
        }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "INSERT INTO b(id, v) VALUES (6, 6)")
            try db.execute(sql: "BEGIN")
            try db.execute(sql: "INSERT INTO b(id, v) VALUES (9, 9)")
            try db.execute(sql: "ROLLBACK")
            try db.execute(sql: "INSERT INTO b(id, v) VALUES (7, 7)")
        }
        let received = changes.wait(for: 3)
        XCTAssertEqual(received.map(rows), [["a 2 insert", "a 2 update"], ["b 6 insert"], ["b 7 insert"]])
        XCTAssertEqual(received.map(\.sequence), [1, 2, 3])
    }

    func testChangesSQLiteDoesNotReportRowByRowConcernTheWholeDatabase() throws {
        let database = try makeDatabase()
        let changes = CollectedChanges(database.changes(in: ["a"]))
        try database.write { try $0.execute(sql: "INSERT INTO a(id, v) VALUES (1, 1)") }
        try database.write { try $0.execute(sql: "DELETE FROM a") }  // the truncate optimization: no update hook
        try database.write { try $0.execute(sql: "UPDATE a SET v = 3 WHERE id = 99") }  // changes nothing: no set
        try database.write { try $0.execute(sql: "CREATE TABLE c(x)") }
        let received = changes.wait(for: 3)
        XCTAssertEqual(received.map(\.isWholeDatabase), [false, true, true])
    }

    func testCommitsOfAnotherDatabaseOnTheSameFileArriveAsExternal() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.db")
        var configuration = Configuration(encryption: .rawKey(Data(repeating: 7, count: 32)))
        configuration.externalChangeLatency = 0.02
        let observed = try Database(path: path, configuration: configuration)
        try observed.write { try $0.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY)") }
        let changes = CollectedChanges(observed.changes(in: ["a"]))
        let other = try Database(path: path, configuration: configuration)
        try other.write { try $0.execute(sql: "INSERT INTO a(id) VALUES (1)") }
        let received = changes.wait(for: 1)
        XCTAssertEqual(received.first?.isExternal, true)
        XCTAssertEqual(received.first?.isWholeDatabase, true)
    }
}
