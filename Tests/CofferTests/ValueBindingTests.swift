import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class ValueBindingTests: XCTestCase {
    func testEverySupportedTypeRoundTrips() throws {
        let db = try Database.temporary()
        let date = Date(timeIntervalSince1970: 1_700_000_000.123456)
        let uuid = UUID()
        let url = URL(string: "https://example.com/a?b=c")!
        let args: StatementArguments = [
            Int.max, Int64.min, Int32(-7), UInt8(255), 3.25, Float(1.5), true, false,
            "héllo\u{0}wörld 🎉", Data([0, 1, 2, 255]), date, uuid, url, nil, "", Data(),
        ]
        try db.write { db in
            try db.execute(sql: "CREATE TABLE v(\((0..<16).map { "c\($0)" }.joined(separator: ", ")))")
            try db.execute(
                sql: "INSERT INTO v VALUES (\(Array(repeating: "?", count: 16).joined(separator: ", ")))", arguments: args)
        }
        let row = try XCTUnwrap(try db.read { try $0.fetchOne(sql: "SELECT * FROM v") })
        XCTAssertEqual(try row.decode(Int.self, at: 0), Int.max)
        XCTAssertEqual(try row.decode(Int64.self, at: 1), Int64.min)
        XCTAssertEqual(try row.decode(Int32.self, at: 2), -7)
        XCTAssertEqual(try row.decode(UInt8.self, at: 3), 255)
        XCTAssertEqual(try row.decode(Double.self, at: 4), 3.25)
        XCTAssertEqual(try row.decode(Float.self, at: 5), 1.5)
        XCTAssertEqual(try row.decode(Bool.self, at: 6), true)
        XCTAssertEqual(try row.decode(Bool.self, at: 7), false)
        XCTAssertEqual(try row.decode(String.self, at: 8), "héllo\u{0}wörld 🎉")
        XCTAssertEqual(try row.decode(Data.self, at: 9), Data([0, 1, 2, 255]))
        XCTAssertEqual(try row.decode(Date.self, at: 10).timeIntervalSince1970, date.timeIntervalSince1970, accuracy: 1e-6)
        XCTAssertEqual(try row.decode(UUID.self, at: 11), uuid)
        XCTAssertEqual(try row.decode(URL.self, at: 12), url)
        XCTAssertEqual(row[13], .null)
        XCTAssertEqual(try row.decode(Int?.self, at: 13), nil)
        XCTAssertEqual(row[14], .text(""), "an empty string is TEXT, not NULL")
        XCTAssertEqual(row[15], .blob(Data()), "an empty blob is a BLOB, not NULL")
        XCTAssertThrowsError(try row.decode(Int8.self, at: 0)) {
            guard case CofferError.conversionFailed = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try row.decode(UUID.self, at: 4))
    }

    /// Each type's own `bind(to:at:)` (integers, Double, String and Optional bind without a DatabaseValue)
    /// stores exactly what binding its `databaseValue` stores: same type, same bytes.
    func testTypesBindingThemselvesBindTheirDatabaseValue() throws {
        let db = try Database.temporary()
        let values: [any DatabaseValueConvertible] = [
            Int.max, Int.min, Int64.min, Int64.max, Int32(-7), Int8.min, UInt8(255), UInt32.max, 0, 3.25, -0.0,
            Double.infinity, -Double.greatestFiniteMagnitude, Float(1.5), true, false, "", "héllo\u{0}wörld 🎉",
            String(repeating: "長", count: 10_000), Data([0, 1, 2, 255]), Data(), Date(timeIntervalSince1970: 1.5),
            UUID(), URL(string: "https://example.com/a?b=c")!, Int?.none, Int?.some(42), String?.none,
            String?.some("x"), Double?.some(2.5), DatabaseValue.null, DatabaseValue.integer(9),
        ]
        try db.read { db in
            let statement = try db.makeStatement(sql: "SELECT typeof(?1) = typeof(?2) AND quote(?1) = quote(?2), typeof(?1)")
            for value in values {
                try value.bind(to: statement, at: 1)
                try statement.bind(value.databaseValue, toParameter: 2)
                XCTAssertTrue(try statement.step())
                XCTAssertEqual(statement.int64(at: 0), 1, "\(value) (\(type(of: value)))")
                statement.reset()
            }
        }
    }

    func testRowsByNameAndCursor() throws {
        let db = try Database.temporary()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE p(id INTEGER PRIMARY KEY, Name TEXT)")
            for i in 0..<1000 { try db.execute(sql: "INSERT INTO p(Name) VALUES (?)", arguments: ["n\(i)"]) }
        }
        let row = try db.read { try $0.fetchOne(sql: "SELECT id, Name FROM p WHERE id = ?", arguments: [10]) }
        XCTAssertEqual(row?["name"] as String?, "n9", "lookup by name ignores case")
        XCTAssertEqual(row?["missing"] as String?, nil)
        var sum = 0
        try db.read { db in
            try db.forEachRow(sql: "SELECT id FROM p") { statement in sum += Int(statement.int64(at: 0)) }
        }
        XCTAssertEqual(sum, 500_500)
    }

    func testArgumentCountMismatchAndSecondStatementAreRefused() throws {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        XCTAssertThrowsError(try db.write { try $0.execute(sql: "INSERT INTO t VALUES (?)", arguments: [1, 2]) }) {
            guard case CofferError.range = $0 else { return XCTFail("\($0)") }
        }
        XCTAssertThrowsError(try db.write { try $0.execute(sql: "INSERT INTO t VALUES (1); DROP TABLE t") })
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 0)
        // Trailing comments and semicolons are not a second statement.
        try db.write { try $0.execute(sql: "INSERT INTO t VALUES (1); -- done\n /* really */ ;") }
    }

    func testReentrantCursorGetsItsOwnStatement() throws {
        let db = try Database.temporary()
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            for i in 0..<3 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) }
        }
        var pairs = 0
        try db.read { db in
            try db.forEachRow(sql: "SELECT x FROM t") { _ in
                try db.forEachRow(sql: "SELECT x FROM t") { _ in pairs += 1 }
            }
        }
        XCTAssertEqual(pairs, 9)
    }
}
