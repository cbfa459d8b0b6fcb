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

@Table("colleague") struct Colleague: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}

// RecordCache.md, "In brief", as written there.
extension Colleague: CachedRecord {
    static var recordCache: RecordCacheLevel { .recent() }  // .all(), or .none: not a CachedRecord
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

    func testInBrief() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try database.write { db in
            try db.upgradeSchema(for: [Colleague.self])
            var colleague = Colleague(id: 42, name: "Ada")
            try colleague.insert(db)
        }

        let first = try database.read { db in try Colleague.fetchOne(db, id: 42) }  // SQL; kept
        let again = try database.read { db in try Colleague.fetchOne(db, id: 42) }  // from memory
        try database.write { db in try db.execute(sql: "UPDATE colleague SET name = 'Ada L.' WHERE id = 42") }
        let renamed = try database.read { db in try Colleague.fetchOne(db, id: 42) }  // never stale: "Ada L."

        XCTAssertEqual(first?.name, "Ada")
        XCTAssertEqual(again?.name, "Ada")
        XCTAssertEqual(renamed?.name, "Ada L.")
        try database.close()
    }
}
