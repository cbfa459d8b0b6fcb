import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class TransactionSavepointTests: XCTestCase {
    struct Boom: Error {}

    private func makeDatabase() throws -> Database {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        return db
    }

    private func values(_ db: Database) throws -> [Int] {
        try db.read { try $0.fetchAll(sql: "SELECT x FROM t ORDER BY x").compactMap { $0["x"] as Int? } }
    }

    func testWriteRollsBackWhenClosureThrows() throws {
        let db = try makeDatabase()
        XCTAssertThrowsError(
            try db.write { db in
                try db.execute(sql: "INSERT INTO t VALUES (1)")
                throw Boom()
            }
        ) { XCTAssertTrue($0 is Boom) }
        XCTAssertEqual(try values(db), [])
        try db.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }
        XCTAssertEqual(try values(db), [2])
    }

    func testNestedSavepointsRollBackOnlyTheirOwnWork() throws {
        let db = try makeDatabase()
        try db.write { db in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            try db.savepoint {
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                XCTAssertThrowsError(
                    try db.savepoint {
                        try db.execute(sql: "INSERT INTO t VALUES (3)")
                        throw Boom()
                    })
                try db.execute(sql: "INSERT INTO t VALUES (4)")
            }
            XCTAssertThrowsError(
                try db.savepoint {
                    try db.execute(sql: "INSERT INTO t VALUES (5)")
                    throw Boom()
                })
        }
        XCTAssertEqual(try values(db), [1, 2, 4])
    }

    func testSavepointOutsideTransactionCommitsOnRelease() throws {
        let db = try makeDatabase()
        try db.writeWithoutTransaction { db in
            try db.savepoint { try db.execute(sql: "INSERT INTO t VALUES (7)") }
            XCTAssertFalse(db.isInsideTransaction)
        }
        XCTAssertEqual(try values(db), [7])
    }

    func testNestedWriteIsRefusedInsteadOfDeadlocking() throws {
        let db = try makeDatabase()
        try db.write { _ in
            XCTAssertThrowsError(try db.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }) { error in
                guard case CofferError.apiMisuse = error else { return XCTFail("\(error)") }
            }
        }
        XCTAssertEqual(try values(db), [])
    }

    func testWriteWithoutTransactionMayNotLeaveOneOpen() throws {
        let db = try makeDatabase()
        XCTAssertThrowsError(
            try db.writeWithoutTransaction { db in
                try db.execute(sql: "BEGIN")
                try db.execute(sql: "INSERT INTO t VALUES (1)")
            })
        XCTAssertEqual(try values(db), [])
    }

    func testReadsCannotWrite() throws {
        let db = try makeDatabase()
        XCTAssertThrowsError(try db.read { try $0.execute(sql: "INSERT INTO t VALUES (1)") }) { error in
            guard case CofferError.readOnly = error else { return XCTFail("\(error)") }
        }
    }

    func testClosedDatabaseRefusesWork() throws {
        let db = try makeDatabase()
        try db.close()
        try db.close()
        XCTAssertThrowsError(try db.read { _ in 1 }) { guard case CofferError.apiMisuse = $0 else { return XCTFail("\($0)") } }
        XCTAssertThrowsError(try db.write { _ in 1 }) { guard case CofferError.apiMisuse = $0 else { return XCTFail("\($0)") } }
    }
}
