import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift block of EncryptionAndKeys.md, compiled and run as written.
final class EncryptionAndKeysArticleTests: InTemporaryDirectoryTestCase {
    func testOverview() throws {
        let database = try Database(
            path: "app.db",
            configuration: Configuration(encryption: .passphrase("correct horse battery staple")))

        try database.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        try database.close()
        let header = try Data(contentsOf: URL(fileURLWithPath: "app.db")).prefix(16)
        XCTAssertNotEqual(header, Data("SQLite format 3\0".utf8), "the file is encrypted")
    }
}
