import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// One flipped frame in the middle of a `-wal` full of updates and deletes, on files written by the three
/// independent producers (system `sqlite3`, the `sqlcipher` 3.4.1 shell, SQLCipher 4.12 from python). Every
/// row's body is a function of its id and version, so each salvaged row is scored exactly: correct (the
/// final version), stale (an older version of a live row), resurrected (a deleted row) or junk. SQLite's
/// own recovery drops every commit after the damaged frame; the salvage loses only the damaged page
/// version and must never return a stale or deleted row. Prints one `[recall]` line per producer.
final class WALDamagedFrameRecallTests: XCTestCase {
    private static let transactions = 30

    /// The workload: 1500 rows checkpointed, then transactions that insert, update and delete.
    private static func workload(copyTo copy: String?, live: String) -> String {
        var sql = """
            PRAGMA journal_mode=WAL;
            PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1500)
            INSERT INTO t(id, v, body) SELECT i, 0, printf('id %d v %d ', i, 0) || substr(hex(zeroblob(40)), 1, 40 + i % 30) FROM n;
            PRAGMA wal_checkpoint(TRUNCATE);

            """
        for k in 1...transactions {
            sql += """
                BEGIN;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 40)
                INSERT INTO t(id, v, body) SELECT 1500 + \(k) * 40 + i, 0, printf('id %d v %d ', 1500 + \(k) * 40 + i, 0) || substr(hex(zeroblob(40)), 1, 40 + i % 30) FROM n;
                UPDATE t SET v = v + 1, body = printf('id %d v %d ', id, v + 1) || substr(hex(zeroblob(40)), 1, 40 + id % 30) WHERE (id * 7 + \(k)) % 19 = 0;
                DELETE FROM t WHERE (id * 13 + \(k)) % 89 = 0;
                COMMIT;

                """
        }
        if let copy { sql += ".shell cp '\(live)' '\(copy)'; cp '\(live)-wal' '\(copy)-wal'\n" }
        return sql
    }

    private struct Score {
        var correct = 0, stale = 0, resurrected = 0, junk = 0
    }

    private func score(_ rows: [SalvagedRow], truth: [Int64: Int64]) -> Score {
        var score = Score()
        for row in rows {
            guard let id = row.rowid, row.values.count == 3, case .integer(let version) = row.values[1],
                case .text(let body) = row.values[2],
                String(decoding: body, as: UTF8.self).hasPrefix("id \(id) v \(version) ")
            else {
                score.junk += 1
                continue
            }
            switch truth[id] {
            case version: score.correct += 1
            case nil: score.resurrected += 1
            default: score.stale += 1
            }
        }
        return score
    }

    private func run(_ producer: String) throws {
        let dir = try TemporaryDirectory()
        let live = dir.path("live.db")
        let input = dir.path("input.db")
        let key: Encryption
        let truthRows: String
        switch producer {
        case "sqlite3":
            try Shell.run("sqlite3", live, Self.workload(copyTo: input, live: live))
            try FileManager.default.copyItem(atPath: input, toPath: dir.path("truth.db"))
            try FileManager.default.copyItem(atPath: input + "-wal", toPath: dir.path("truth.db-wal"))
            truthRows = try Shell.run("sqlite3", dir.path("truth.db"), "SELECT id, v FROM t;")
            key = .none
        case "sqlcipher":
            try Shell.sqlcipher(live, key: "pw", Self.workload(copyTo: input, live: live) + "SELECT 'T', id, v FROM t;")
            truthRows = try Shell.sqlcipher(live, passphrase: "pw", "SELECT id, v FROM t;").stdout
            key = .passphrase("pw")
        default:
            let script = """
                import shutil, sqlcipher3, sys
                db = sqlcipher3.connect(sys.argv[1], isolation_level=None)
                db.execute("PRAGMA key='pw'")
                db.executescript(sys.stdin.read())
                shutil.copy(sys.argv[1], sys.argv[2]); shutil.copy(sys.argv[1] + '-wal', sys.argv[2] + '-wal')
                for row in db.execute('SELECT id, v FROM t'): print('%d|%d' % row)
                """
            let made = try Shell.run(
                "/usr/bin/env", ["python3", "-c", script, live, input], input: Self.workload(copyTo: nil, live: live))
            XCTAssertEqual(made.status, 0, made.stderr)
            truthRows = made.stdout
            key = .passphrase("pw")
        }
        let truth = GroundTruth.versions(truthRows)  // the final state, read by the producer itself
        XCTAssertGreaterThan(truth.count, 1900, producer)

        // Flip one byte in the body of a frame in the middle of the log (headers untouched), one holding the
        // last version of its page: that version is lost, and the older ones must not stand in for it.
        let walPath = input + "-wal"
        var wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: walPath)))
        let frames = WALBytes.frames(wal)
        XCTAssertGreaterThan(frames.count, 20, producer)
        let lastTransaction = try XCTUnwrap(frames.dropLast().lastIndex { $0.commit != 0 })
        let lastVersion = (1..<lastTransaction).first { index in
            index >= frames.count / 3 && !frames[(index + 1)...].contains { $0.page == frames[index].page }
        }
        let middle = (lastVersion ?? frames.count / 2) + 1
        wal[WALBytes.frameOffset(middle, pageSize: WALBytes.pageSize(wal)) + 24 + 500] ^= 0x20
        try Data(wal).write(to: URL(fileURLWithPath: walPath))

        // What reading only up to the break gives (SQLite's recovery, and this engine before it judged frames
        // one by one): the WAL cut at the damaged frame.
        let cut = dir.path("cut.db")
        try FileManager.default.copyItem(atPath: input, toPath: cut)
        try Data(wal[0..<WALBytes.frameOffset(middle, pageSize: WALBytes.pageSize(wal))]).write(
            to: URL(fileURLWithPath: cut + "-wal"))
        var cutSink = CollectingSink()
        let cutFile = key.isEncrypted ? try ProfileDetection.open(path: cut, key: key) : try DatabaseFile(path: cut, key: .none)
        _ = try Salvager(file: cutFile).run(into: &cutSink)
        let before = score(cutSink.rows["t"] ?? [], truth: truth)

        let file = key.isEncrypted ? try ProfileDetection.open(path: input, key: key) : try DatabaseFile(path: input, key: .none)
        let salvager = Salvager(file: file)
        var sink = CollectingSink()
        let report = try salvager.run(into: &sink)
        let index = try XCTUnwrap(salvager.wal?.index)
        XCTAssertLessThan(index.framesSQLiteKeeps, middle, "\(producer): SQLite's own recovery stops at the flipped frame")
        let result = score(sink.rows["t"] ?? [], truth: truth)
        let recall = Double(result.correct) / Double(truth.count)
        print(
            String(
                format:
                    "[recall] wal-flipped-frame %@: %d/%d correct (%.2f%%), stale %d, resurrected %d, junk %d, lost pages %@; up to the break only: %d correct, %d stale, %d resurrected",
                producer, result.correct, truth.count, recall * 100, result.stale, result.resurrected, result.junk,
                index.lost.sorted().description, before.correct, before.stale, before.resurrected))
        XCTAssertEqual(result.stale, 0, producer)
        XCTAssertEqual(result.resurrected, 0, producer)
        XCTAssertEqual(result.junk, 0, producer)
        XCTAssertGreaterThan(recall, 0.97, producer)
        XCTAssertEqual(index.lost.count, lastVersion == nil ? 0 : 1, producer)
        XCTAssertEqual(report.walFramesBad, index.lost.count, producer)
    }

    func testPlaintextWAL() throws { try run("sqlite3") }

    func testSQLCipher3WAL() throws { try run("sqlcipher") }

    func testSQLCipher4WAL() throws {
        try XCTSkipUnless(
            (try? Shell.run("/usr/bin/env", ["python3", "-c", "import sqlcipher3"]).status) == 0, "sqlcipher3 missing")
        try run("sqlcipher4")
    }
}
