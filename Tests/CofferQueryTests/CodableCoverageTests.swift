import Coffer
import XCTest

enum Status: String, Codable, Equatable { case active, archived }
enum Priority: Int, Codable, Equatable {
    case low = 1
    case high = 9
}

struct Address: Codable, Equatable {
    var street: String
    var tags: [String]
    var geo: [Double]?
}

@Table("everything")
struct Everything: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var int: Int
    var int8: Int8
    var int16: Int16
    var int32: Int32
    var int64: Int64
    var uint8: UInt8
    var uint16: UInt16
    var uint32: UInt32
    var uint64: UInt64
    var double: Double
    var float: Float
    var bool: Bool
    var string: String
    var data: Data
    var date: Date
    var url: URL
    var uuid: UUID
    var status: Status
    var priority: Priority
    var optionalInt: Int?
    var optionalString: String?
    var optionalStatus: Status?
    var optionalDate: Date?
    var address: Address
    var optionalAddress: Address?
    var list: [Int]
    var dictionary: [String: Int]

    static let sample = Everything(
        id: nil, int: -42, int8: -8, int16: -16, int32: .min, int64: .max, uint8: .max, uint16: .max,
        uint32: .max, uint64: UInt64(Int64.max), double: 3.141592653589793, float: 1.5, bool: true,
        string: "héllo \u{202E} 🧪 'quoted' \"double\"", data: Data([0, 1, 2, 0xff]), date: referenceDate,
        url: URL(string: "https://example.com/a?b=c#d")!, uuid: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
        status: .archived, priority: .high, optionalInt: nil, optionalString: "present", optionalStatus: nil,
        optionalDate: referenceDate, address: Address(street: "1 Main", tags: ["a", "b"], geo: [1.5, -2]),
        optionalAddress: nil, list: [3, 1, 2], dictionary: ["k": 1])
}

/// Every supported property type survives a round trip, stored the way Coffer documents.
final class CodableCoverageTests: XCTestCase {
    func testEveryTypeRoundTrips() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var record = Everything.sample
            try record.insert(db)
            var empty = Everything.sample
            empty.optionalInt = 7
            empty.optionalStatus = .active
            empty.optionalAddress = Address(street: "", tags: [], geo: nil)
            empty.string = ""
            empty.data = Data()
            try empty.insert(db)
            XCTAssertEqual(try Everything.order { $0.id.asc }.fetchAll(db), [record, empty])
        }
    }

    func testStorageClasses() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var record = Everything.sample
            try record.insert(db)
            let row = try XCTUnwrap(
                db.fetchOne(
                    sql: """
                        SELECT typeof(date), typeof(uuid), length(uuid), typeof(bool), typeof(status), typeof(priority),
                               typeof(address), address, typeof(optionalInt), typeof(url), typeof(uint64), list
                        FROM everything
                        """))
            XCTAssertEqual(
                row.values.map(\.description),
                [
                    #""real""#, #""blob""#, "16", #""integer""#, #""text""#, #""integer""#,
                    #""text""#, #""{\"geo\":[1.5,-2],\"street\":\"1 Main\",\"tags\":[\"a\",\"b\"]}""#, #""null""#, #""text""#,
                    #""integer""#, #""[3,1,2]""#,
                ])
        }
    }

    func testFilteringByEnumsAndNestedValuesUsesTheStoredForm() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var record = Everything.sample
            try record.insert(db)
            XCTAssertEqual(try Everything.filter { $0.status == .archived && $0.priority == .high }.fetchCount(db), 1)
            XCTAssertEqual(try Everything.filter { $0.uuid == Everything.sample.uuid }.fetchCount(db), 1)
            XCTAssertEqual(try Everything.filter { $0.date == referenceDate }.fetchCount(db), 1)
            XCTAssertEqual(try Everything.filter { $0.optionalStatus == nil }.fetchCount(db), 1)
            XCTAssertEqual(try Everything.select { $0.status }.fetchAll(db), [.archived])
            XCTAssertEqual(try Everything.select { $0.address }.fetchOne(db), Everything.sample.address)
            XCTAssertEqual(try Everything.select { $0.optionalStatus }.fetchAll(db), [nil])
        }
    }

    func testAMismatchedStoredValueThrowsInsteadOfCrashing() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Everything.self])
            var record = Everything.sample
            try record.insert(db)
            try db.execute(sql: "UPDATE everything SET int8 = 1000, status = 'unknown'")
            XCTAssertThrowsError(try Everything.fetchAll(db))
            XCTAssertThrowsError(try db.fetchAll(Conversation.self, SQL("SELECT 1 AS id, NULL AS title, 0 AS archived")))
        }
    }
}
