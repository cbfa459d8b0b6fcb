import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A real full disk: the child runs under `ulimit -f` with SIGXFSZ ignored (as a daemon should), so writes
/// past the limit fail with EFBIG instead of killing it.
final class FullDiskTests: XCTestCase {
    private var dir: TemporaryDirectory!

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        dir = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        try "pw\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
    }

    /// dash's `ulimit -f` counts 512-byte blocks: 1 MiB. A coverage build writes its profile at exit, and
    /// the limit would cut that file short into one no merge accepts: the child's profile goes to /dev/null.
    private func runLimited(
        _ arguments: [String], blocks: Int = 2048, executable: String = Shell.cofferExecutable
    ) throws -> ChildRun {
        try ChildRun.run(
            "/bin/sh",
            [
                "-c",
                "trap '' XFSZ; ulimit -f \(blocks) && export LLVM_PROFILE_FILE=/dev/null && exec \"$0\" \"$@\"",
                executable,
            ] + arguments, in: dir.url.path)
    }

    func testWriterHittingAFullDiskFailsCleanlyAndKeepsEveryAcknowledgedCommit() throws {
        let path = dir.path("full.db")
        let run = try runLimited(
            [
                path, "--count", "5000", "--full", "--passphrase-file", dir.path("pw"),
                "--kdf-iter", "2",
            ], executable: Shell.tortureExecutable)
        print("full disk, coffer-torture: \(run.summary)")
        XCTAssertNil(run.signal, run.stderr)
        XCTAssertNotEqual(run.exitStatus, 0, "the writer must report the full disk")
        let acknowledged = run.stdout.split(separator: "\n").compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
        let last = try XCTUnwrap(acknowledged.last, "some commits fit before the limit: \(run.stderr)")
        XCTAssertGreaterThan(last, 10)

        var configuration = Configuration(
            encryption: .passphrase("pw"), cipher: CipherOptions(keyDerivation: .pbkdf2SHA1(rounds: 2)))
        configuration.readerCount = 0
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        try database.read { db in
            XCTAssertEqual(try db.fetchValue(String.self, sql: "PRAGMA integrity_check"), "ok")
            let top = try db.fetchValue(Int.self, sql: "SELECT max(id) FROM txn") ?? 0
            XCTAssertGreaterThanOrEqual(top, last, "an acknowledged commit is missing")
            let transactions = try db.fetchAll(
                sql: "SELECT id, rows, (SELECT count(*) FROM entry WHERE entry.txn = txn.id) AS stored FROM txn")
            let bad = transactions.filter { row in
                let id: Int = row["id"] ?? 0
                let rows: Int? = row["rows"]
                let stored: Int? = row["stored"]
                return rows != TortureRows.rows(for: id) || rows != stored
            }
            XCTAssertEqual(bad.count, 0, "a partial transaction is visible")
        }
        print("full disk, coffer-torture: \(last) acknowledged, all present, integrity ok")
    }

    func testRepairHittingAFullDiskLeavesNoOutput() throws {
        let input = dir.path("big.db")
        let output = dir.path("out.db")
        let made = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", input],
            input: """
                CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB);
                WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000)
                  INSERT INTO t SELECT x, randomblob(1000) FROM c;
                """)
        XCTAssertEqual(made.status, 0, made.stderr)
        let run = try runLimited(["repair", input, "-o", output])
        print("full disk, repair: \(run.summary)")
        XCTAssertNil(run.signal, run.stderr)
        XCTAssertNotEqual(run.exitStatus, 0, "a repair that could not write OUTPUT must fail")
        XCTAssertFalse(run.stderr.isEmpty, "the failure is explained")
        let left = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("out.db") }
        XCTAssertEqual(left, [], "a failed repair leaves no OUTPUT behind")
    }

    /// The disk fills at many points of one repair (file size limits from 4 KiB up to the whole output):
    /// each run either writes a whole OUTPUT or fails, explains why and leaves nothing named OUTPUT*.
    func testRepairFailsCleanlyWhereverTheDiskFills() throws {
        let input = dir.path("mid.db")
        let made = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", input],
            input: """
                CREATE TABLE t(id INTEGER PRIMARY KEY, body BLOB, s TEXT);
                CREATE INDEX t_s ON t(s);
                WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 600)
                  INSERT INTO t SELECT x, randomblob(300), 'text ' || x FROM c;
                """)
        XCTAssertEqual(made.status, 0, made.stderr)
        var failures = 0
        var successes = 0
        for blocks in stride(from: 8, through: 1200, by: 24) {
            let output = dir.path("o\(blocks).db")
            let run = try runLimited(["repair", input, "-o", output], blocks: blocks)
            XCTAssertNil(run.signal, "\(blocks) blocks: \(run.stderr)")
            let left = try FileManager.default.contentsOfDirectory(atPath: dir.url.path).filter { $0.hasPrefix("o\(blocks).db") }
            if run.exitStatus == 0 {
                successes += 1
                let check = try Shell.run(
                    "/usr/bin/sqlcipher", ["-batch", output], input: "SELECT count(*) FROM t; PRAGMA integrity_check;")
                XCTAssertEqual(check.stdout, "600\nok\n", "\(blocks) blocks")
            } else {
                failures += 1
                XCTAssertEqual(left, [], "\(blocks) blocks: a failed repair left \(left)")
                XCTAssertFalse(run.stderr.isEmpty, "\(blocks) blocks: the failure is explained")
            }
        }
        print("full disk, repair: \(failures) limits failed cleanly, \(successes) completed whole")
        XCTAssertGreaterThan(failures, 10)
        XCTAssertGreaterThan(successes, 0)
    }
}
