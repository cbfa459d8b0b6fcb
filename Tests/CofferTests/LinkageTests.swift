import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class LinkageTests: XCTestCase {
    /// SQLCipher and the system SQLite both export `sqlite3_*`: only SQLCipher may be in the process.
    func testOnlySQLCipherIsLoaded() throws {
        _ = try Database.inMemory()
        // /proc files report size 0, so read them as a stream.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertFalse(maps.contains("libsqlite3.so"), "the system libsqlite3 must not be linked")
        // Exactly one SQLCipher: Debian's libsqlcipher.so.0 (3.4.1) or SQLCipher 4's libsqlcipher4.so.0.
        let db = try Database.inMemory()
        let version = try db.read { try $0.fetchValue(String.self, sql: "PRAGMA cipher_version") }
        let sqlite = try db.read { try $0.fetchValue(String.self, sql: "SELECT sqlite_version()") }
        if TestedSQLCipher.isVersion4 {
            XCTAssertTrue(maps.contains("libsqlcipher4.so.0"))
            XCTAssertFalse(maps.contains("libsqlcipher.so.0"), "Debian's SQLCipher 3.4.1 must not be linked too")
            XCTAssertEqual(version?.hasPrefix("4."), true, version ?? "nil")
            XCTAssertEqual(sqlite, "3.49.2")
        } else {
            XCTAssertTrue(maps.contains("libsqlcipher.so.0"))
            XCTAssertFalse(maps.contains("libsqlcipher4.so"), "SQLCipher 4 must not be linked too")
            XCTAssertEqual(version, "3.4.1")
            XCTAssertEqual(sqlite, "3.15.2")
        }
    }
}
