import CofferTestSupport
import Foundation
import XCTest

/// A zeroed page is damage: `coffer verify` lists it among the damaged pages (SQLCipher reads an all-zero
/// page without checking its HMAC; a plaintext page of zeros is no valid page of its role), and `coffer
/// repair`'s report does not count it in `pages_ok`.
final class ZeroedPageReportTests: XCTestCase {
    private let zeroed = [5, 40, 100]

    private func makeDatabase(_ dir: TemporaryDirectory, kind: String) throws -> (path: String, key: [String]) {
        let path = dir.path("\(kind).db")
        let fill = """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 6000)
            INSERT INTO t(body) SELECT printf('row %d %s', i, hex(randomblob(60))) FROM n;
            INSERT INTO t(id, body) VALUES (100000, zeroblob(20000));
            """
        try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        switch kind {
        case "plaintext":
            try Shell.run("sqlite3", path, "PRAGMA page_size=4096;\n" + fill)
            return (path, [])
        case "sqlcipher3":
            try Shell.sqlcipher(path, key: "pw", fill)
        default:
            try Shell.python(path, module: "sqlcipher3", key: "pw", fill)
        }
        return (path, ["--passphrase-file", dir.path("pw")])
    }

    func testZeroedPagesAreNamedByVerifyAndNotCountedOkByRepair() throws {
        for kind in ["plaintext", "sqlcipher3", "sqlcipher4"] {
            let dir = try TemporaryDirectory()
            let (path, key) = try makeDatabase(dir, kind: kind)
            // Intact, with overflow pages of nothing but zeros (valid pages in a plaintext file).
            let clean = try Shell.run(Shell.cofferExecutable, ["verify", path] + key)
            XCTAssertEqual(clean.status, 0, "\(kind): \(clean.stdout) \(clean.stderr)")
            for page in zeroed { try FileScan.zeroPage(path, page: page) }

            let verify = try Shell.run(Shell.cofferExecutable, ["verify", path, "--json"] + key)
            XCTAssertEqual(verify.status, 1, "\(kind): \(verify.stdout) \(verify.stderr)")
            let object = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any], "\(kind): \(verify.stdout)")
            let listed = (object["damagedPages"] as? [Int]) ?? []
            XCTAssertEqual(listed, zeroed, "\(kind): verify must name every zeroed page")

            let repair = try Shell.run(
                Shell.cofferExecutable, ["repair", path, "-o", dir.path("out.db"), "--report", dir.path("report.json")] + key)
            XCTAssertEqual(repair.status, 0, "\(kind): \(repair.stderr)")
            let report = try XCTUnwrap(
                JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("report.json"))))
                    as? [String: Any])
            let total = try XCTUnwrap(report["pages_total"] as? Int)
            XCTAssertEqual(report["pages_ok"] as? Int, total - zeroed.count, "\(kind): \(report)")
            XCTAssertEqual(report["pages_zero"] as? Int, zeroed.count, "\(kind)")
        }
    }
}
