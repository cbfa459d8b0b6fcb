import XCTest

@testable import CofferRepair

/// `Tests/Fixtures/repair/sqlcipher4.db` was written by SQLCipher 4.12.0 (PyPI `sqlcipher3-binary` 0.6.0,
/// defaults: PBKDF2-HMAC-SHA512 256000 rounds, HMAC-SHA512, 4096-byte pages, reserve 80) with key 'pw4':
/// `CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, big TEXT)` and rows i = 1…60 with
/// name = "name i" and big = printf("x%03d", i) repeated 1500 times when i % 20 == 0, else 5 times.
/// The library installed here (3.4.1) cannot read it; the repair engine does its own crypto.
final class SQLCipher4ProfileTests: XCTestCase {
    private var fixture: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/repair/sqlcipher4.db").path
    }

    func testSQLCipher4FileSalvagesWithItsProfile() throws {
        let (sink, report) = try salvage(fixture, key: "pw4", settings: .sqlcipher4, useWAL: false)
        XCTAssertEqual(report.pageSize, 4096)
        XCTAssertEqual(report.profile, "sqlcipher4")
        let expected: Set<[SalvagedValue]> = Set((1...60).map { (i: Int64) in
            let unit = String(format: "x%03d", i)
            let big = String(repeating: unit, count: i % 20 == 0 ? 1500 : 5)
            return [.integer(i), .integer(i), .text(Array("name \(i)".utf8)), .text(Array(big.utf8))]
        })
        XCTAssertEqual(sink.rowSet("t"), expected)
        XCTAssertEqual(report.rowsDropped, 0)
    }

    func testSQLCipher3ProfileDoesNotOpenIt() {
        XCTAssertThrowsError(try DatabaseFile(path: fixture, key: .passphrase("pw4"), settings: .sqlcipher3)) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
        }
    }
}
