import CofferTestSupport
import Foundation
import XCTest

/// A SQLCipher file whose page 1 (or only its salt) is destroyed while its `-wal` still holds committed
/// frames of page 1: the salt is in clear in those frames, so every row comes back (before: nothing was
/// salvaged, the key verified on no page). Files from the `sqlcipher` 3.4.1 shell and SQLCipher 4.12.
final class RepairSaltFromWALTests: XCTestCase {
    private let sql = """
        PRAGMA journal_mode=WAL;
        PRAGMA wal_autocheckpoint=0;
        CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
        INSERT INTO t(body) SELECT printf('checkpointed %d', i) FROM n;
        PRAGMA wal_checkpoint(TRUNCATE);
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
        INSERT INTO t(body) SELECT printf('in the wal %d', i) FROM n;
        """

    private func make(_ dir: TemporaryDirectory, sqlcipher4: Bool) throws -> String {
        let live = dir.path("live.db")
        let input = dir.path("input.db")
        try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        if sqlcipher4 {
            let script = """
                import shutil, sqlcipher3, sys
                db = sqlcipher3.connect(sys.argv[1], isolation_level=None)
                db.execute("PRAGMA key='pw'")
                db.executescript(sys.stdin.read())
                shutil.copy(sys.argv[1], sys.argv[2]); shutil.copy(sys.argv[1] + '-wal', sys.argv[2] + '-wal')
                """
            let made = try Shell.run("/usr/bin/env", ["python3", "-c", script, live, input], input: sql)
            XCTAssertEqual(made.status, 0, made.stderr)
        } else {
            try Shell.sqlcipher(live, key: "pw", sql + "\n.shell cp '\(live)' '\(input)'; cp '\(live)-wal' '\(input)-wal'")
        }
        let wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: input + "-wal")))
        XCTAssertTrue(WALBytes.frames(wal).contains { $0.page == 1 }, "the WAL holds page 1")
        return input
    }

    private func assertEveryRowComesBack(sqlcipher4: Bool, destroyed: Int) throws {
        let dir = try TemporaryDirectory()
        let input = try make(dir, sqlcipher4: sqlcipher4)
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: input))
        handle.write(Data(repeating: 0x5a, count: destroyed))
        try handle.close()
        let output = dir.path("out.db")
        let result = try Shell.run(
            Shell.cofferExecutable, ["repair", input, "-o", output, "--passphrase-file", dir.path("pw")])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        // OUTPUT keeps INPUT's derivation: SQLCipher 4's (PBKDF2-HMAC-SHA512 256,000) opens in the shell by raw key.
        let key = sqlcipher4 ? try ShellRawKey.spec(passphrase: "pw", path: output) : "pw"
        let count = try Shell.sqlcipher(output, passphrase: key, "SELECT count(*) FROM t;")
        XCTAssertEqual(count.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "6000", count.stderr)
    }

    func testSQLCipher3PageOneDestroyed() throws {
        try assertEveryRowComesBack(sqlcipher4: false, destroyed: 4096)
    }

    func testSQLCipher3SaltDestroyed() throws {
        try assertEveryRowComesBack(sqlcipher4: false, destroyed: 16)
    }

    func testSQLCipher4PageOneDestroyed() throws {
        try XCTSkipUnless(
            (try? Shell.run("/usr/bin/env", ["python3", "-c", "import sqlcipher3"]).status) == 0, "sqlcipher3 missing")
        try assertEveryRowComesBack(sqlcipher4: true, destroyed: 4096)
    }
}
