import Coffer
import Foundation
import XCTest

/// A record over a table whose columns have no declared type, so that each holds whatever is stored.
@Table("loose")
struct LooseRow: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64
    var int64: Int64
    var int: Int
    var int8: Int8
    var uint64: UInt64
    var bool: Bool
    var double: Double
    var float: Float
    var string: String
    var data: Data
    var optionalInt64: Int64?
    var optionalInt: Int?
    var optionalString: String?
    var optionalDouble: Double?
}

final class RecordReaderStorageClassTests: XCTestCase {
    /// The generated reader reads each plain type in place when the column holds its usual storage class
    /// and converts or refuses anything else out of line: every storage class in every column must give
    /// what the Codable path gives (the same value, or a `CofferError` with the same code and message).
    func testEveryStorageClassInEveryColumnReadsAsTheCodablePathReadsIt() throws {
        let database = try makeDatabase()
        let columns = LooseRow.columnDefinitions.map(\.name).filter { $0 != "id" }
        let valid = "1, 1, 1, 1, 1, 1.5, 1.5, 'text', x'00ff', 1, 1, 'text', 1.5"
        let stored = [
            "NULL", "0", "-1", "300", "9223372036854775807", "-9223372036854775808", "2.0", "2.5", "1e300", "'12'",
            "'12abc'", "''", "'héllo'", "x'0102'", "x''", "'2.0'",
        ]
        try database.write { db in
            try db.execute(sql: "CREATE TABLE loose(id INTEGER PRIMARY KEY, \(columns.joined(separator: ", ")))")
            var compared = 0
            for (position, column) in columns.enumerated() {
                for value in stored {
                    var values = valid.components(separatedBy: ", ")
                    values[position] = value
                    try db.execute(sql: "DELETE FROM loose")
                    try db.execute(sql: "INSERT INTO loose VALUES (1, \(values.joined(separator: ", ")))")
                    let positional = Result { try LooseRow.fetchAll(db) }
                    let codable = Result { try db.fetchAll(LooseRow.self, SQL("SELECT * FROM loose")) }
                    let label = "\(column) = \(value)"
                    switch (positional, codable) {
                    case (.success(let left), .success(let right)):
                        XCTAssertEqual(left, right, label)
                    case (.failure(let left as CofferError), .failure(let right as CofferError)):
                        XCTAssertEqual(left.code, right.code, label)
                        XCTAssertEqual(left.message, right.message, label)
                    case (.failure(let left), .failure(let right)):
                        XCTFail("\(label): untyped errors \(left), \(right)")
                    default:
                        XCTFail("\(label): positional \(positional), codable \(codable)")
                    }
                    compared += 1
                }
            }
            XCTAssertEqual(compared, columns.count * stored.count)
            // The fast paths' own values, to be sure both sides read something.
            try db.execute(sql: "DELETE FROM loose")
            try db.execute(sql: "INSERT INTO loose VALUES (7, \(valid))")
            XCTAssertEqual(
                try LooseRow.fetchAll(db),
                [
                    LooseRow(
                        id: 7, int64: 1, int: 1, int8: 1, uint64: 1, bool: true, double: 1.5, float: 1.5, string: "text",
                        data: Data([0, 0xff]), optionalInt64: 1, optionalInt: 1, optionalString: "text", optionalDouble: 1.5)
                ])
        }
    }
}
