import CofferTestSupport
import XCTest

@testable import CofferRepair

final class WALSalvageTests: XCTestCase {
    /// Builds a WAL database whose first 300 rows are checkpointed into the main file and whose later
    /// transactions live only in the WAL. Snapshots (database + WAL copies) are taken with `.shell cp`
    /// while the connection is open, after each stage. Returns the directory.
    private func makeSnapshots(_ dir: TemporaryDirectory) throws {
        let live = dir.path("live.db")
        func snapshot(_ name: String) -> String {
            ".shell cp '\(live)' '\(dir.path(name))'; cp '\(live)-wal' '\(dir.path(name))-wal'; cp '\(live)' '\(dir.path(name)).truth'; cp '\(live)-wal' '\(dir.path(name)).truth-wal'"
        }
        try Shell.sqlcipher(
            live,
            """
            PRAGMA journal_mode=WAL;
            PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT, n INTEGER);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
            INSERT INTO t(body, n) SELECT printf('main %d %s', i, hex(randomblob(40))), i FROM n;
            PRAGMA wal_checkpoint(TRUNCATE);
            \(snapshot("stage0.db"))
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
            INSERT INTO t(body, n) SELECT printf('wal-one %d %s', i, hex(randomblob(40))), i FROM n;
            UPDATE t SET body = 'updated in wal' WHERE id % 10 = 0 AND id <= 300;
            DELETE FROM t WHERE id BETWEEN 50 AND 59;
            COMMIT;
            \(snapshot("stage1.db"))
            BEGIN;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 200)
            INSERT INTO t(body, n) SELECT printf('wal-two %d %s', i, hex(randomblob(40))), i FROM n;
            COMMIT;
            \(snapshot("stage2.db"))
            """)
    }

    private func truth(_ dir: TemporaryDirectory, _ stage: String) throws -> Set<[SalvagedValue]> {
        Set(try GroundTruth.rows(dir.path(stage) + ".truth", key: "pw", table: "t", readOnly: false))
    }

    func testRowsCommittedOnlyInTheWALAreSalvaged() throws {
        let dir = try TemporaryDirectory()
        try makeSnapshots(dir)
        let expected = try truth(dir, "stage2.db")
        XCTAssertEqual(expected.count, 300 + 300 - 10 + 200)
        let (sink, report) = try salvage(dir.path("stage2.db"), key: "pw")
        XCTAssertEqual(sink.rowSet("t"), expected)
        XCTAssertGreaterThan(report.walFramesUsed, 0)
        XCTAssertEqual(report.walFramesBad, 0)
        // Without the WAL only the checkpointed rows exist.
        let (mainOnly, _) = try salvage(dir.path("stage2.db"), key: "pw", useWAL: false)
        XCTAssertEqual(mainOnly.rowSet("t"), try truth(dir, "stage0.db"))
    }

    func testDamagedFrameBeforeTheLastCommitLosesOnlyItsPage() throws {
        let dir = try TemporaryDirectory()
        try makeSnapshots(dir)
        let path = dir.path("stage2.db")
        let stage1Size = try XCTUnwrap(
            FileManager.default.attributesOfItem(atPath: dir.path("stage1.db") + "-wal")[.size] as? UInt64)
        // Flip bytes inside the first frame body of the second transaction (page 1: the header and schema):
        // SQLite's recovery drops the whole transaction; here only that page version is lost, the schema is
        // read from page 1's older version, and every row of the last commit comes back.
        try Damage.overwrite(path + "-wal", at: stage1Size + 24 + 100, with: [0xde, 0xad, 0xbe, 0xef])
        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertTrue(report.schemaFromOlderPageOne)
        XCTAssertEqual(sink.rowSet("t"), try truth(dir, "stage2.db"))
    }

    func testFrameFailingItsHMACLosesItsPageAndNeverReturnsAStaleVersion() throws {
        let dir = try TemporaryDirectory()
        try makeSnapshots(dir)
        let path = dir.path("stage1.db")
        let walPath = path + "-wal"
        var wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: walPath)))
        // Damage the body of every committed frame holding page 2 (an existing table page), then re-seal
        // the checksum chain so the frames stay "valid" and only their HMAC betrays them.
        let frameSize = 24 + 4096
        var damaged = 0
        var offset = 32
        while offset + frameSize <= wal.count {
            let page =
                UInt32(wal[offset]) << 24 | UInt32(wal[offset + 1]) << 16 | UInt32(wal[offset + 2]) << 8 | UInt32(wal[offset + 3])
            if page == 2 {
                wal[offset + 24 + 300] ^= 0xff
                damaged += 1
            }
            offset += frameSize
        }
        XCTAssertGreaterThan(damaged, 0)
        let bigEndian = wal[3] & 1 == 1
        var sums = WALChecksum.compute(wal[0..<24], bigEndian: bigEndian, seed: (0, 0))
        offset = 32
        while offset + frameSize <= wal.count {
            sums = WALChecksum.compute(wal[offset..<(offset + 8)], bigEndian: bigEndian, seed: sums)
            sums = WALChecksum.compute(wal[(offset + 24)..<(offset + frameSize)], bigEndian: bigEndian, seed: sums)
            for (index, value) in [sums.0, sums.1].enumerated() {
                for byte in 0..<4 {
                    wal[offset + 16 + 4 * index + byte] = UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32(byte)))
                }
            }
            offset += frameSize
        }
        try Data(wal).write(to: URL(fileURLWithPath: walPath))

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertGreaterThan(report.walFramesBad, 0)
        let full = try truth(dir, "stage1.db")
        let rows = sink.rowSet("t")
        // Page 2's committed content is in the damaged frames only: its older version (the main file's)
        // would bring back stale and deleted rows, so it is lost, and every row returned is current.
        XCTAssertTrue(rows.isSubset(of: full), "no stale or deleted row: \(rows.subtracting(full).count)")
        XCTAssertGreaterThan(rows.count, full.count * 9 / 10)
    }

    /// A SQLCipher 3 file with 1,024-byte pages whose WAL (restarted once by a checkpoint, so stale frames of
    /// the older generation follow the newer ones) is cut mid-frame at several places: every row the library
    /// itself reads from the cut pair — the commits before the cut — comes back, and nothing else.
    func testAWALCutMidFrameKeepsEveryCommittedRow() throws {
        let dir = try TemporaryDirectory()
        let live = dir.path("live.db")
        var script = """
            PRAGMA journal_mode=WAL;
            PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT, n INTEGER);
            CREATE INDEX t_body ON t(body);
            """
        for transaction in 1...20 {
            script += """

                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 150)
                INSERT INTO t(body, n) SELECT printf('txn %d row %d %s', \(transaction), i, hex(randomblob(i % 40))), i FROM n;
                """
            if transaction == 12 { script += "\nPRAGMA wal_checkpoint(RESTART);" }
        }
        script += "\n.shell cp '\(live)' '\(dir.path("snap.db"))'; cp '\(live)-wal' '\(dir.path("snap.db"))-wal'"
        try Shell.sqlcipher(live, pageSize: 1024, script)
        let walSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: dir.path("snap.db") + "-wal")[.size] as? Int)
        let frames = (walSize - 32) / (1024 + 24)
        XCTAssertGreaterThan(frames, 200)
        for (fraction, extra) in [(0.1, 17), (0.35, 500), (0.6, 1040), (0.85, 24), (0.97, 700)] {
            let name = "cut-\(fraction).db"
            let truthName = name + ".truth"
            for target in [name, truthName] {
                try FileManager.default.copyItem(atPath: dir.path("snap.db"), toPath: dir.path(target))
                try FileManager.default.copyItem(atPath: dir.path("snap.db") + "-wal", toPath: dir.path(target) + "-wal")
                let handle = try XCTUnwrap(FileHandle(forWritingAtPath: dir.path(target) + "-wal"))
                try handle.truncate(atOffset: UInt64(32 + Int(Double(frames) * fraction) * (1024 + 24) + extra))
                try handle.close()
            }
            let expected = Set(try GroundTruth.rows(dir.path(truthName), key: "pw", pageSize: 1024, table: "t", readOnly: false))
            XCTAssertGreaterThan(expected.count, 0)
            let (sink, _) = try salvage(dir.path(name), key: "pw")
            XCTAssertEqual(sink.rowSet("t").count, expected.count, "cut at \(fraction) of \(frames) frames + \(extra) bytes")
            XCTAssertEqual(sink.rowSet("t"), expected, "cut at \(fraction) of \(frames) frames + \(extra) bytes")
        }
    }
}

final class WALPlaintextTests: XCTestCase {
    func testPlaintextWALIsOverlaid() throws {
        let dir = try TemporaryDirectory()
        let live = dir.path("live.db")
        let copy = dir.path("copy.db")
        try Shell.run(
            "sqlite3", live,
            """
            PRAGMA journal_mode=WAL;
            PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            INSERT INTO t(body) VALUES ('checkpointed');
            PRAGMA wal_checkpoint(TRUNCATE);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 500)
            INSERT INTO t(body) SELECT printf('wal row %d', i) FROM n;
            .shell cp '\(live)' '\(copy)'; cp '\(live)-wal' '\(copy)-wal'
            """)
        let (sink, report) = try salvage(copy, key: .none)
        XCTAssertEqual(sink.rows["t"]?.count, 501)
        XCTAssertGreaterThan(report.walFramesUsed, 0)
        let (mainOnly, _) = try salvage(copy, key: .none, useWAL: false)
        XCTAssertEqual(mainOnly.rows["t"]?.count, 1)
    }

}
