import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift block of Operations.md, compiled and run as written.
final class OperationsArticleTests: XCTestCase {
    func testOverview() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE blob(id INTEGER PRIMARY KEY, data BLOB)")
            for _ in 0..<200 { try db.execute(sql: "INSERT INTO blob(data) VALUES (zeroblob(4000))") }
            try db.execute(sql: "DELETE FROM blob WHERE id > 20")
        }

        let report = try database.vacuum { progress in
            print(progress.step, progress.pagesWritten, "/", progress.pagesExpected)
        }
        print("\(report.pagesBefore) → \(report.pagesAfter) pages")

        XCTAssertLessThan(report.pagesAfter, report.pagesBefore)
    }
}
