import CofferTestSupport
import Foundation
import XCTest

/// `coffer verify`, `info`, `repair` and `migrate` treat INPUT as evidence: on WALs built to provoke
/// SQLite (hostile sizes and page numbers), the directory holding INPUT has exactly the same files with
/// exactly the same bytes afterwards — no checkpoint into INPUT, no deleted `-wal`, no `-shm` created.
final class InputEvidenceTests: XCTestCase {
    private enum Hostility: CaseIterable {
        /// Committed frames SQLite would checkpoint on close.
        case ordinaryWAL
        /// The WAL header says 65536-byte pages; the file ends inside the first frame.
        case pageSize65536ShortFrame
        /// A resealed commit frame for page 0x7fffffff.
        case framePage0x7fffffff
        /// A resealed frame whose page is hostile: a B-tree page claiming 65535 cells.
        case hostileFramePage
    }

    /// A database in WAL mode with committed frames, copied while its writer is open (so the `-wal` stays).
    private func makeInput(_ dir: TemporaryDirectory, encrypted: Bool) throws -> String {
        let live = dir.path("live.db")
        let input = dir.path("evidence/input.db")
        try FileManager.default.createDirectory(atPath: dir.path("evidence"), withIntermediateDirectories: true)
        let sql = """
            PRAGMA journal_mode=WAL;
            PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
            INSERT INTO t(body) SELECT printf('row %d', i) FROM n;
            PRAGMA wal_checkpoint(TRUNCATE);
            INSERT INTO t(body) VALUES ('only in the wal');
            .shell cp '\(live)' '\(input)'; cp '\(live)-wal' '\(input)-wal'
            """
        if encrypted {
            try Shell.sqlcipher(live, key: "pw", sql)
        } else {
            try Shell.run("sqlite3", live, "PRAGMA page_size=4096;\n" + sql)
        }
        try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        return input
    }

    private func damage(_ walPath: String, _ hostility: Hostility) throws {
        var wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: walPath)))
        XCTAssertGreaterThan(WALBytes.frames(wal).count, 0)
        switch hostility {
        case .ordinaryWAL:
            return
        case .pageSize65536ShortFrame:
            WALBytes.putU32(&wal, 8, 65536)
            WALBytes.reseal(&wal)
        case .framePage0x7fffffff:
            WALBytes.putU32(&wal, 32, 0x7fff_ffff)
            WALBytes.reseal(&wal)
        case .hostileFramePage:
            let body = 32 + 24
            // A table leaf header claiming 65535 cells and content starting at offset 0 (plaintext files);
            // for an encrypted file the same bytes simply fail the page's HMAC.
            wal.replaceSubrange(body..<(body + 8), with: [0x0d, 0, 0, 0xff, 0xff, 0, 0, 0])
            WALBytes.reseal(&wal)
        }
        try Data(wal).write(to: URL(fileURLWithPath: walPath))
    }

    /// Every file in the directory with its bytes.
    private func snapshot(_ directory: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
            result[name] = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
        }
        return result
    }

    private func assertInputUntouched(encrypted: Bool) throws {
        for hostility in Hostility.allCases {
            let dir = try TemporaryDirectory()
            let input = try makeInput(dir, encrypted: encrypted)
            try damage(input + "-wal", hostility)
            let before = try snapshot(dir.path("evidence"))
            XCTAssertEqual(before.keys.sorted(), ["input.db", "input.db-wal"])
            let key = encrypted ? ["--passphrase-file", dir.path("pw")] : []
            let runs: [(String, [String])] = [
                ("verify", ["verify", input] + key),
                ("info", ["info", input] + key),
                ("info --json", ["info", input, "--json"] + key),
                ("repair", ["repair", input, "-o", dir.path("repaired.db")] + key),
                ("migrate", ["migrate", input, "-o", dir.path("migrated.db")] + key),
            ]
            for (name, arguments) in runs {
                let result = try Shell.run(Shell.cofferExecutable, arguments)
                XCTAssertNotEqual(result.status, 2, "\(hostility) \(name): \(result.stderr)")
                XCTAssertEqual(
                    try snapshot(dir.path("evidence")), before,
                    "\(encrypted ? "encrypted" : "plaintext") \(hostility): `coffer \(name)` changed INPUT's directory")
            }
        }
    }

    func testPlaintextInputsAreNeverWritten() throws {
        try assertInputUntouched(encrypted: false)
    }

    func testEncryptedInputsAreNeverWritten() throws {
        try assertInputUntouched(encrypted: true)
    }

    /// A committed frame in the middle of the WAL flipped: SQLite's recovery drops every later commit, so
    /// verify says the file is damaged (exit 1), for the library's path (plaintext, SQLCipher 3) alike.
    func testVerifyReportsAChecksumBreakBeforeTheLastCommit() throws {
        for encrypted in [false, true] {
            let dir = try TemporaryDirectory()
            let input = try makeInput(dir, encrypted: encrypted)
            let key = encrypted ? ["--passphrase-file", dir.path("pw")] : []
            let clean = try Shell.run(Shell.cofferExecutable, ["verify", input] + key)
            XCTAssertEqual(clean.status, 0, clean.stdout + clean.stderr)
            // Append two more commits, so a frame in the middle can break the chain before the last one.
            var wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: input + "-wal")))
            let size = WALBytes.pageSize(wal)
            let frames = WALBytes.frames(wal)
            let frame = Array(wal[32..<(32 + 24 + size)])
            wal += frame + frame
            WALBytes.reseal(&wal)
            wal[WALBytes.frameOffset(frames.count + 1, pageSize: size) + 24 + 200] ^= 0x55
            try Data(wal).write(to: URL(fileURLWithPath: input + "-wal"))
            let result = try Shell.run(Shell.cofferExecutable, ["verify", input] + key)
            XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
            XCTAssertTrue(result.stdout.contains("checksum chain breaks at frame \(frames.count + 1)"), result.stdout)
        }
    }

    /// The same damage on a SQLCipher 4 file written by SQLCipher 4.12 (read by the page decoder).
    func testVerifyReportsAFlippedCommittedFrameOfASQLCipher4WAL() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("v4.db")
        let script = """
            import shutil, sqlcipher3
            db = sqlcipher3.connect('\(dir.path("live.db"))', isolation_level=None)
            db.execute("PRAGMA key='pw'")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA wal_autocheckpoint=0")
            db.execute("CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT)")
            for i in range(6):
                db.execute("INSERT INTO t(body) SELECT printf('tx %d row %d', ?, value) FROM (WITH RECURSIVE n(value) AS (SELECT 1 UNION ALL SELECT value+1 FROM n WHERE value < 50) SELECT value FROM n)", (i,))
            shutil.copy('\(dir.path("live.db"))', '\(input)')
            shutil.copy('\(dir.path("live.db"))-wal', '\(input)-wal')
            """
        let made = try Shell.run("/usr/bin/env", ["python3", "-c", script])
        XCTAssertEqual(made.status, 0, made.stderr)
        try "pw".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        let key = ["--passphrase-file", dir.path("pw")]
        let clean = try Shell.run(Shell.cofferExecutable, ["verify", input] + key)
        XCTAssertEqual(clean.status, 0, clean.stdout + clean.stderr)
        var wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: input + "-wal")))
        let frames = WALBytes.frames(wal)
        let lastCommit = try XCTUnwrap(frames.lastIndex { $0.commit != 0 })
        XCTAssertGreaterThan(lastCommit, 2)
        wal[WALBytes.frameOffset(2, pageSize: WALBytes.pageSize(wal)) + 24 + 100] ^= 0x01
        try Data(wal).write(to: URL(fileURLWithPath: input + "-wal"))
        let before = try snapshot(dir.url.path)
        let result = try Shell.run(Shell.cofferExecutable, ["verify", input] + key)
        XCTAssertEqual(result.status, 1, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("checksum chain breaks at frame 2"), result.stdout)
        XCTAssertEqual(try snapshot(dir.url.path).keys.sorted(), before.keys.sorted())
    }
}
