import CofferTestSupport
import Foundation
import XCTest

final class InfoCommandTests: XCTestCase {
    private func makeShellDatabase(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.path("shell.db")
        let made = try Shell.sqlcipher(
            path, passphrase: "shell pw",
            #"""
            CREATE TABLE alpha(id INTEGER PRIMARY KEY, v TEXT);
            CREATE TABLE "odd ""name"""(x);
            INSERT INTO alpha(v) VALUES ('a'), ('b'), ('c');
            INSERT INTO "odd ""name""" VALUES (1), (2);
            """#)
        XCTAssertEqual(made.status, 0, made.stderr)
        try "shell pw\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        return path
    }

    func testInfoJSONOnShellFile() throws {
        let dir = try TemporaryDirectory()
        let path = try makeShellDatabase(dir)
        let result = try Shell.run(Shell.cofferExecutable, ["info", path, "--passphrase-file", dir.path("pw"), "--json"])
        XCTAssertEqual(result.status, 0, result.stderr)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(object["page_size"] as? Int, 4096)
        XCTAssertEqual(object["page_count"] as? Int, 3)
        XCTAssertEqual(object["journal_mode"] as? String, "delete")
        let tables = try XCTUnwrap(object["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.map { $0["name"] as? String }, ["alpha", "odd \"name\""])
        XCTAssertEqual(tables.map { $0["rows"] as? Int }, [3, 2])
    }

    func testInfoTextWithPassphraseFromEnvironment() throws {
        let dir = try TemporaryDirectory()
        let path = try makeShellDatabase(dir)
        let result = try Shell.run(
            Shell.cofferExecutable, ["info", path, "--passphrase-env", "COFFER_TEST_PW"],
            environment: ["COFFER_TEST_PW": "shell pw"])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(result.stdout.contains("alpha"), result.stdout)
        XCTAssertTrue(result.stdout.contains("3 rows"), result.stdout)
    }

    func testWrongPassphraseExitsThree() throws {
        let dir = try TemporaryDirectory()
        let path = try makeShellDatabase(dir)
        try "not it".write(toFile: dir.path("bad"), atomically: true, encoding: .utf8)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let result = try Shell.run(Shell.cofferExecutable, ["info", path, "--passphrase-file", dir.path("bad")])
        XCTAssertEqual(result.status, 3)
        XCTAssertTrue(result.stderr.contains("wrong passphrase"), result.stderr)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testUsageErrorsExitTwoAndMissingFileExitsOne() throws {
        let unknown = try Shell.run(Shell.cofferExecutable, ["info", "--no-such-flag"])
        XCTAssertEqual(unknown.status, 2, unknown.stderr)
        let conflicting = try Shell.run(
            Shell.cofferExecutable, ["info", "x.db", "--passphrase-file", "a", "--passphrase-env", "HOME"])
        XCTAssertEqual(conflicting.status, 2, conflicting.stderr)
        let missing = try Shell.run(Shell.cofferExecutable, ["info", "/nonexistent/db.sqlite"])
        XCTAssertEqual(missing.status, 1, missing.stderr)
    }

    func testDemoRunsCleanly() throws {
        let dir = try TemporaryDirectory()
        let result = try Shell.run(Shell.cofferExecutable, ["demo", "--dir", dir.url.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("every snapshot consistent"), result.stdout)
        XCTAssertTrue(result.stdout.contains("not found, the file is encrypted"), result.stdout)
    }
}
