import Coffer
import Foundation
import XCTest

final class LinkageTests: XCTestCase {
    /// SQLCipher and the system SQLite both export `sqlite3_*`: only SQLCipher may be in the process.
    func testOnlySQLCipherIsLoaded() throws {
        _ = try Database.inMemory()
        // /proc files report size 0, so read them as a stream.
        let handle = try XCTUnwrap(FileHandle(forReadingAtPath: "/proc/self/maps"))
        let maps = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(maps.contains("libsqlcipher.so"))
        XCTAssertFalse(maps.contains("libsqlite3.so"), "the system libsqlite3 must not be linked")
        let db = try Database.inMemory()
        XCTAssertEqual(try db.read { try $0.fetchValue(String.self, sql: "PRAGMA cipher_version") }, "3.4.1")
        XCTAssertEqual(try db.read { try $0.fetchValue(String.self, sql: "SELECT sqlite_version()") }, "3.15.2")
    }
}
