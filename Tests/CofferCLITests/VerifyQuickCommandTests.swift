import CofferTestSupport
import Foundation
import XCTest

/// `coffer verify --quick` runs `PRAGMA quick_check` where `verify` runs `integrity_check`: an index that no
/// longer agrees with its table passes the quick check and fails the full one, while a damaged page is named
/// at both depths (the page scan is the same). Files made by the `sqlcipher` shell (3.4.1) and by Python's
/// `sqlite3`, the index broken by rewriting its definition in `sqlite_master` (the entries stay those of
/// column `a`, the definition says `b`).
final class VerifyQuickCommandTests: XCTestCase {
    private func makeDatabase(_ dir: TemporaryDirectory, encrypted: Bool) throws -> (path: String, key: [String]) {
        let path = dir.path(encrypted ? "sqlcipher3.db" : "plaintext.db")
        let fill = """
            CREATE TABLE t(a, b, body TEXT);
            CREATE INDEX i ON t(a);
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 2000)
            INSERT INTO t SELECT x, -x, printf('row %d %s', x, hex(randomblob(40))) FROM n;
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'CREATE INDEX i ON t(b)' WHERE name = 'i';
            """
        if encrypted {
            try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
            try Shell.sqlcipher(path, key: "pw", fill)
            return (path, ["--passphrase-file", dir.path("pw")])
        }
        try Shell.python(path, "PRAGMA page_size = 4096;\n" + fill)
        return (path, [])
    }

    private func report(_ result: Shell.Result, _ label: String) throws -> [String: Any] {
        try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(label): \(result.stdout)")
    }

    func testQuickPassesAnIndexTheFullCheckRejectsAndBothNameADamagedPage() throws {
        for encrypted in [true, false] {
            let label = encrypted ? "sqlcipher3" : "plaintext"
            let dir = try TemporaryDirectory()
            let (path, key) = try makeDatabase(dir, encrypted: encrypted)
            let before = try Data(contentsOf: URL(fileURLWithPath: path))

            let full = try Shell.run(Shell.cofferExecutable, ["verify", path, "--json"] + key)
            XCTAssertEqual(full.status, 1, "\(label): \(full.stdout) \(full.stderr)")
            let fullReport = try report(full, label)
            let fullErrors = fullReport["integrityErrors"] as? [String] ?? []
            XCTAssertTrue(fullErrors.contains("row 1 missing from index i"), "\(label): \(fullErrors.prefix(3))")
            XCTAssertEqual(fullReport["damagedPages"] as? [Int], [], label)

            let quick = try Shell.run(Shell.cofferExecutable, ["verify", path, "--quick"] + key)
            XCTAssertEqual(quick.status, 0, "\(label): \(quick.stdout) \(quick.stderr)")
            XCTAssertTrue(quick.stdout.contains("quick_check:     ok"), "\(label): \(quick.stdout)")
            XCTAssertFalse(quick.stdout.contains("integrity_check"), "\(label): \(quick.stdout)")
            XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "\(label): verify wrote its input")

            // The last page zeroed: a leaf of the table or the index, so quick_check fails too.
            let pages = before.count / 4096
            try FileScan.zeroPage(path, page: pages)
            let damaged = try Shell.run(Shell.cofferExecutable, ["verify", path, "--quick", "--json"] + key)
            XCTAssertEqual(damaged.status, 1, "\(label): \(damaged.stdout) \(damaged.stderr)")
            let object = try report(damaged, label)
            XCTAssertEqual(object["damagedPages"] as? [Int], [pages], label)
            XCTAssertFalse((object["integrityErrors"] as? [String] ?? []).isEmpty, "\(label): \(object)")
        }
    }
}
