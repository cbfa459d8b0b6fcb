import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of Coffer.md (the module's landing page), compiled and run as written.
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
        let first: String? = notes.first?["text"]

        XCTAssertEqual(try notes.map { try $0.decode(String.self, at: 1) }, ["hello"])
        XCTAssertEqual(first, "hello")
        try database.close()
    }

    /// "Errors": a second insert of the same address is caught as a constraint, so nothing escapes.
    func testErrors() throws {
        let database = try Database(path: "app.db", configuration: articleConfiguration)
        try database.write { db in try db.execute(sql: "CREATE TABLE user(email TEXT NOT NULL UNIQUE)") }
        let email = "ada@example.com"
        for _ in 0..<2 {
            // swift-format-ignore
            do { try database.write { try $0.execute(sql: "INSERT INTO user(email) VALUES (?)", arguments: [email]) } }
            catch CofferError.constraint { /* any constraint */ }
            catch let error as CofferError where error.code == .busy { /* … */ }
        }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM user") }, 1)
        try database.close()
    }
}
