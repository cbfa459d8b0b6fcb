import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift block of Coffer.md (the module's landing page), compiled and run as written.
final class CofferArticleTests: InTemporaryDirectoryTestCase {
    func testOverview() throws {
        let database = try Database(
            path: "app.db",
            configuration: Configuration(encryption: .passphrase("correct horse battery staple")))

        try database.write { db in  // one BEGIN IMMEDIATE transaction
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["hello"])
        }  // committed here; rolled back if the closure throws

        let notes = try database.read { db in  // one snapshot, on a reader connection
            try db.fetchAll(sql: "SELECT id, text FROM note ORDER BY id")
        }

        XCTAssertEqual(try notes.map { try $0.decode(String.self, at: 1) }, ["hello"])
        try database.close()
    }
}
