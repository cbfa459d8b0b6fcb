import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// A `-wal` cut in the middle of a frame, on a file the `sqlcipher` 3.4.1 shell wrote with 1024-byte pages
/// (#38 item 4: a report of 98.5% of the rows on authenticated pages and frames). The truth is what the
/// shell itself reads from the same cut files: the last commit whose frames all survive. The salvage must
/// give every row of it, and no version a later, cut transaction wrote. Prints one `[recall]` line per cut.
final class WALTruncatedFrameRecallTests: XCTestCase {
    private static let transactions = 40

    /// 3,000 rows (checkpointed when `checkpoint`, else the schema and every row live in the log), then
    /// transactions that insert, update and delete; the live files are copied while the shell still holds
    /// them, so the copy keeps its `-wal`.
    private static func workload(copyTo copy: String, live: String, checkpoint: Bool) -> String {
        var sql = """
            PRAGMA journal_mode=WAL;
            PRAGMA wal_autocheckpoint=0;
            CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER, body TEXT);
            CREATE INDEX t_v ON t(v, id);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO t(id, v, body) SELECT i, 0, printf('id %d v %d ', i, 0) || substr(hex(zeroblob(60)), 1, 20 + i % 90) FROM n;

            """
        if checkpoint { sql += "PRAGMA wal_checkpoint(TRUNCATE);\n" }
        for k in 1...transactions {
            sql += """
                BEGIN;
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 60)
                INSERT INTO t(id, v, body) SELECT 3000 + \(k) * 60 + i, 0, printf('id %d v %d ', 3000 + \(k) * 60 + i, 0) || substr(hex(zeroblob(60)), 1, 20 + i % 90) FROM n;
                UPDATE t SET v = v + 1, body = printf('id %d v %d ', id, v + 1) || substr(hex(zeroblob(60)), 1, 20 + (id + v) % 90) WHERE (id * 7 + \(k)) % 23 = 0;
                DELETE FROM t WHERE (id * 13 + \(k)) % 97 = 0;
                COMMIT;

                """
        }
        return sql + ".shell cp '\(live)' '\(copy)'; cp '\(live)-wal' '\(copy)-wal'\n"
    }

    func testSQLCipher3WALCutMidFrameWith1024BytePages() throws { try run(checkpoint: true) }

    func testSQLCipher3WALCutMidFrameNeverCheckpointed() throws { try run(checkpoint: false) }

    private func run(checkpoint: Bool) throws {
        let dir = try TemporaryDirectory()
        let live = dir.path("live.db")
        let input = dir.path("input.db")
        try Shell.sqlcipher(live, pageSize: 1024, Self.workload(copyTo: input, live: live, checkpoint: checkpoint))
        let wal = [UInt8](try Data(contentsOf: URL(fileURLWithPath: input + "-wal")))
        let pageSize = WALBytes.pageSize(wal)
        XCTAssertEqual(pageSize, 1024)
        let frames = WALBytes.frames(wal)
        XCTAssertGreaterThan(frames.count, 200)
        let commits = frames.indices.filter { frames[$0].commit != 0 }.map { $0 + 1 }
        XCTAssertEqual(commits.count, Self.transactions + (checkpoint ? 0 : 3))

        // Cuts in the page of a frame (at a quarter, half and three quarters of the log, in the last
        // transaction, and in the last commit frame itself) and in a frame's header.
        let last = frames.count
        let cuts: [(frame: Int, into: Int)] = [
            (last / 4, 24 + pageSize / 2), (last / 2, 24 + 300), (3 * last / 4, 24 + pageSize - 1),
            (last - 2, 24 + pageSize / 2), (last, 24 + 17), (2 * last / 3, 10),
        ]
        for (number, (frame, into)) in cuts.enumerated() {
            let name = "\(checkpoint ? "checkpointed" : "log-only") cut\(number)"
            let cutPath = dir.path("\(name).db")
            let truthPath = dir.path("\(name)-truth.db")
            let bytes = Data(wal[0..<(WALBytes.frameOffset(frame, pageSize: pageSize) + into)])
            for path in [cutPath, truthPath] {
                try FileManager.default.copyItem(atPath: input, toPath: path)
                try bytes.write(to: URL(fileURLWithPath: path + "-wal"))
            }
            let shell = try Shell.sqlcipher(truthPath, passphrase: "pw", pageSize: 1024, "SELECT id, v FROM t;")
            XCTAssertEqual(shell.status, 0, shell.stderr)
            let truth = GroundTruth.versions(shell.stdout)
            let kept = commits.last { $0 < frame } ?? 0
            XCTAssertGreaterThan(truth.count, checkpoint ? 3000 : 0, name)

            let file = try ProfileDetection.open(path: cutPath, key: .passphrase("pw"))
            var sink = CollectingSink()
            let report = try Salvager(file: file).run(into: &sink)
            var correct = 0
            var wrong: [String] = []
            var seen = Set<Int64>()
            for row in sink.rows["t"] ?? [] {
                guard let id = row.rowid, row.values.count == 3, case .integer(let version) = row.values[1],
                    case .text(let body) = row.values[2],
                    String(decoding: body, as: UTF8.self).hasPrefix("id \(id) v \(version) "),
                    truth[id] == version, seen.insert(id).inserted
                else {
                    wrong.append("\(row.rowid.map(String.init) ?? "nil"): \(row.values.prefix(2))")
                    continue
                }
                correct += 1
            }
            print(
                "[recall] wal-cut \(name) frame \(frame) of \(last) (+\(into) bytes, last whole commit at frame \(kept)):"
                    + " \(correct)/\(truth.count) correct, \(wrong.count) wrong, \(report.walFramesBad) bad frames")
            XCTAssertEqual(correct, truth.count, "\(name): rows lost")
            XCTAssertEqual(wrong, [], name)
        }
    }
}
