import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of Concurrency.md, compiled and run as written.
final class ConcurrencyArticleTests: XCTestCase {
    private func noteDatabase() throws -> (TemporaryDirectory, Database) {
        let (directory, database) = try articleDatabase()
        try database.write { db in try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)") }
        return (directory, database)
    }

    func testOverview() async throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }

        try await database.write { db in  // one BEGIN IMMEDIATE transaction
            try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["hello"])
        }  // committed here; rolled back if the closure throws

        let count = try await database.read { db in  // async twins never block the caller's thread
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note")
        }

        XCTAssertEqual(count, 1)
    }

    func testSavepoints() throws {
        let (directory, database) = try noteDatabase()
        defer { withExtendedLifetime(directory) {} }

        try database.write { db in
            try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["kept"])
            do {
                try db.savepoint {
                    try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["undone"])
                    throw CancellationError()
                }
            } catch is CancellationError {
                // only the savepoint's insert is rolled back; "kept" commits with the transaction
            }
            let id = try db.savepoint { () throws -> Int64 in
                try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["also kept"])
                return db.lastInsertedRowID
            }
            print("inserted", id)
        }

        let texts = try database.read { db in
            try db.fetchAll(sql: "SELECT text FROM note ORDER BY id").map { try $0.decode(String.self, at: 0) }
        }
        XCTAssertEqual(texts, ["kept", "also kept"])
    }
}
