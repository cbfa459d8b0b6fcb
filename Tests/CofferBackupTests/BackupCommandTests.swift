import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The CLI contract: `coffer backup`, `restore`, `verify`, with their exit codes.
final class BackupCommandTests: XCTestCase {
    private let key = ["--passphrase-env", "COFFER_TEST_PASSPHRASE", "--kdf-iter", "2"]
    private let environment = ["COFFER_TEST_PASSPHRASE": BackupFixture.passphrase]

    private func coffer(_ arguments: [String], passphrase: String = BackupFixture.passphrase) throws -> Shell.Result {
        try Shell.run(Shell.cofferExecutable, arguments, environment: ["COFFER_TEST_PASSPHRASE": passphrase])
    }

    func testBackupRestoreVerifyRoundTripAndExitCodes() throws {
        let directory = try TemporaryDirectory()
        let path = try BackupFixture.populatedFile(in: directory, rows: 400)
        let expected = try BackupFixture.dump(path: path)
        let backups = directory.path("backups")

        let backup = try coffer(["backup", path, "--to", backups] + key)
        XCTAssertEqual(backup.status, 0, backup.stderr)
        XCTAssertTrue(backup.stdout.contains("generation 1 (full)"), backup.stdout)

        let verify = try coffer(["verify", path] + key)
        XCTAssertEqual(verify.status, 0, verify.stderr)
        XCTAssertTrue(verify.stdout.contains("integrity_check: ok"), verify.stdout)

        let restored = directory.path("restored.db")
        let restore = try coffer(["restore", backups, "--to", restored] + key)
        XCTAssertEqual(restore.status, 0, restore.stderr)
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)

        let again = try coffer(["restore", backups, "--to", restored] + key)
        XCTAssertEqual(again.status, 1, "refuses to overwrite without --force")
        let forced = try coffer(["restore", backups, "--to", restored, "--force"] + key)
        XCTAssertEqual(forced.status, 0, forced.stderr)

        let wrong = try coffer(["verify", path] + key, passphrase: "wrong")
        XCTAssertEqual(wrong.status, 3)
        let wrongRestore = try coffer(["restore", backups, "--to", directory.path("x.db")] + key, passphrase: "wrong")
        XCTAssertEqual(wrongRestore.status, 3)
        let usage = try coffer(["restore", backups] + key)
        XCTAssertEqual(usage.status, 2)

        // Flip one byte of page 3: verify names it and exits 1.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(4096 * 2 + 200))
        let byte = try XCTUnwrap(handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: UInt64(4096 * 2 + 200))
        handle.write(Data([~byte]))
        try handle.close()
        let damaged = try coffer(["verify", path, "--json"] + key)
        XCTAssertEqual(damaged.status, 1)
        let report = try JSONDecoder().decode(VerificationReport.self, from: Data(damaged.stdout.utf8))
        XCTAssertEqual(report.damagedPages, [3])
    }
}
