import Coffer
import CofferTestSupport
import Foundation
import XCTest

@Table("author") struct Author: Codable, Sendable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}

// RecordCache.md, "Overview", as written there.
extension Author: CachedRecord {
    static var recordCache: RecordCacheLevel { .recent() }  // or .all(), or .none
}

/// The ```swift blocks of RecordCache.md, compiled and run as written.
final class RecordCacheArticleTests: XCTestCase {
    func testOverview() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try database.write { db in
            try db.upgradeSchema(for: [Author.self])
            var author = Author(id: 42, name: "Ada")
            try author.insert(db)
        }

        let author = try database.read { db in try Author.fetchOne(db, id: 42) }

        XCTAssertEqual(author, Author(id: 42, name: "Ada"))
    }
}
