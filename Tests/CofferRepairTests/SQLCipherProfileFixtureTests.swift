import XCTest

@testable import CofferRepair

/// Fixtures in `Tests/Fixtures/repair/`, written by SQLCipher 4.12.0 (PyPI `sqlcipher3-binary` 0.6.0):
/// `sqlcipherN.db` with key 'pwN', using `PRAGMA cipher_default_compatibility = N` before the key for
/// N = 1, 2 (4 uses the defaults: PBKDF2-HMAC-SHA512 256000 rounds, HMAC-SHA512, 4096-byte pages,
/// reserve 80). Each holds `CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, big TEXT)` with rows
/// i = 1…60: name = "name i", big = printf("x%03d", i) repeated 1500 times when i % 20 == 0, else 5.
/// The library installed here (3.4.1) reads none of them; the repair engine does its own crypto.
final class SQLCipherProfileFixtureTests: XCTestCase {
    private func fixture(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/repair/\(name)").path
    }

    private let expected: Set<[SalvagedValue]> = Set(
        (1...60).map { (i: Int64) in
            let unit = String(format: "x%03d", i)
            let big = String(repeating: unit, count: i % 20 == 0 ? 1500 : 5)
            return [.integer(i), .integer(i), .text(Array("name \(i)".utf8)), .text(Array(big.utf8))]
        })

    private func assertSalvages(
        _ name: String, key: String, settings: CipherSettings, pageSize: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let (sink, report) = try salvage(fixture(name), key: key, settings: settings, useWAL: false)
        XCTAssertEqual(report.pageSize, pageSize, file: file, line: line)
        XCTAssertEqual(report.profile, settings.name, file: file, line: line)
        XCTAssertEqual(sink.rowSet("t"), expected, file: file, line: line)
        XCTAssertEqual(report.rowsDropped, 0, file: file, line: line)
    }

    func testSQLCipher4FileSalvagesWithItsProfile() throws {
        try assertSalvages("sqlcipher4.db", key: "pw4", settings: .sqlcipher4, pageSize: 4096)
    }

    func testSQLCipher2FileSalvagesWithItsProfile() throws {
        try assertSalvages("sqlcipher2.db", key: "pw2", settings: .sqlcipher2, pageSize: 1024)
    }

    func testSQLCipher1FileWithoutHMACSalvagesWithItsProfile() throws {
        try assertSalvages("sqlcipher1.db", key: "pw1", settings: .sqlcipher1.with(pageSize: nil), pageSize: 1024)
    }

    func testProfileIsDetectedWhenNotGiven() throws {
        for (name, key, profile) in [
            ("sqlcipher4.db", "pw4", "sqlcipher4"), ("sqlcipher2.db", "pw2", "sqlcipher2"),
            ("sqlcipher1.db", "pw1", "sqlcipher1"),
        ] {
            let file = try ProfileDetection.open(path: fixture(name), key: .passphrase(key))
            XCTAssertEqual(file.settings.name, profile)
            var sink = CollectingSink()
            _ = try Salvager(file: file, useWAL: false).run(into: &sink)
            XCTAssertEqual(sink.rowSet("t"), expected, name)
        }
        XCTAssertThrowsError(try ProfileDetection.open(path: fixture("sqlcipher4.db"), key: .passphrase("nope"))) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
        }
    }

    func testOtherProfilesDoNotOpenThem() {
        XCTAssertThrowsError(try DatabaseFile(path: fixture("sqlcipher4.db"), key: .passphrase("pw4"), settings: .sqlcipher3)) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
        }
        XCTAssertThrowsError(try DatabaseFile(path: fixture("sqlcipher2.db"), key: .passphrase("pw2"), settings: .sqlcipher3)) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
        }
        XCTAssertThrowsError(try DatabaseFile(path: fixture("sqlcipher1.db"), key: .passphrase("wrong"), settings: .sqlcipher1)) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
        }
    }
}
