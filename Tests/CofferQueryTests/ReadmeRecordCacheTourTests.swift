import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The "Record cache" tour (RecordCache.md, "In brief", since the README became a front page), compiled and
/// run as written (the type renamed `TourContact`).
@Table("contact") struct TourContact: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}

// RecordCache.md: In brief
extension TourContact: CachedRecord {
    static var recordCache: RecordCacheLevel { .recent() }  // .all(), or .none: not a CachedRecord
}
// RecordCache.md end

final class ReadmeRecordCacheTourTests: XCTestCase {
    func testTheRecordCacheTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("tour.db"), configuration: Configuration(encryption: .passphrase("pw")))
        typealias Contact = TourContact
        try database.write { db in
            try db.upgradeSchema(for: [Contact.self])
            var contact = Contact(id: 42, name: "Ada")
            try contact.insert(db)
        }

        // RecordCache.md: In brief
        let first = try database.read { db in try Contact.fetchOne(db, id: 42) }  // SQL; kept
        let again = try database.read { db in try Contact.fetchOne(db, id: 42) }  // from memory
        try database.write { db in try db.execute(sql: "UPDATE contact SET name = 'Ada L.' WHERE id = 42") }
        let renamed = try database.read { db in try Contact.fetchOne(db, id: 42) }  // never stale: "Ada L."
        // RecordCache.md end

        XCTAssertEqual(first?.name, "Ada")
        XCTAssertEqual(again?.name, "Ada")
        XCTAssertEqual(renamed?.name, "Ada L.")
    }
}
