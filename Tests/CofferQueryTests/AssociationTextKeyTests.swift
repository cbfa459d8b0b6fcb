import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// A country, keyed by its code: the parent of cities through a TEXT foreign key.
@Table("country")
struct Country: Codable, Equatable {
    @Column(primaryKey: true) var code: String
    var name: String

    static let cities = hasMany(City.self, using: City.countryKey)
}

/// A city, optionally in a country (a NULL key belongs to no country).
@Table("city")
struct City: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var countryCode: String?
    var name: String

    static let countryKey = ForeignKey(columns.countryCode, references: Country.columns.code)
    static var constraints: [TableConstraint<City>] { [countryKey.constraint] }
}

/// Eager and lazy loads keyed by TEXT values (the eager load's non-integer key table), with repeated
/// loads reusing the association's statements.
final class AssociationTextKeyTests: XCTestCase {
    func testTextKeysStitchEachCountrysCities() throws {
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Country.self, City.self])
            for (code, name) in [("fr", "France"), ("de", "Germany"), ("it", "Italy")] {
                var country = Country(code: code, name: name)
                try country.insert(db)
            }
            for (code, name) in [("fr", "Paris"), ("de", "Berlin"), ("fr", "Lyon"), (nil, "Atlantis"), ("de", "Bonn")] {
                var city = City(id: nil, countryCode: code, name: name)
                try city.insert(db)
            }
        }
        let association = Country.cities.order { [$0.name.asc] }
        try database.read { db in
            let (loaded, statements) = try db.countingStatements {
                try Country.order { [$0.name.asc] }.including(all: association).fetchAll(db)
            }
            XCTAssertEqual(statements, 2)
            XCTAssertEqual(loaded.map(\.0.name), ["France", "Germany", "Italy"])
            XCTAssertEqual(loaded.map { $0.1.map(\.name) }, [["Lyon", "Paris"], ["Berlin", "Bonn"], []])

            // A second load prepares nothing new: both statements come from the association's shapes.
            let before = db.preparedStatementCount
            let again = try Country.order { [$0.name.asc] }.including(all: association).fetchAll(db)
            XCTAssertEqual(again.map { $0.1.map(\.name) }, loaded.map { $0.1.map(\.name) })
            XCTAssertEqual(db.preparedStatementCount, before)

            // Lazily, by the same TEXT key: one statement for every country.
            let german = try Country.cities.records(of: Country(code: "de", name: "Germany"))
            XCTAssertEqual(Set(german.map(\.name)), ["Berlin", "Bonn"])
            XCTAssertEqual(try Country.cities.records(of: Country(code: "it", name: "Italy")), [])
            XCTAssertEqual(db.preparedStatementCount, before + 1)
        }
    }
}
