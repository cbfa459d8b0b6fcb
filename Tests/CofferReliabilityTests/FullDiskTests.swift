import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A real full disk: the child runs under `ulimit -f` with SIGXFSZ ignored (as a daemon should), so writes
/// past the limit fail with EFBIG instead of killing it.
final class FullDiskTests: XCTestCase {
    private var dir: TemporaryDirectory!

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        try "pw\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
    }

    /// dash's `ulimit -f` counts 512-byte blocks: 1 MiB.
    private let limit = ["-f", "2048"]

    private func runLimited(_ arguments: [String]) throws -> ChildRun {
        try ChildRun.run("/bin/sh", ["-c", "trap '' XFSZ; ulimit \(limit.joined(separator: " ")) && exec \"$0\" \"$@\"",
                                     Shell.cofferExecutable] + arguments, in: dir.url.path)
    }

    func testWriterHittingAFullDiskFailsCleanlyAndKeepsEveryAcknowledgedCommit() throws {
        let path = dir.path("full.db")
        let run = try runLimited(["_torture", path, "--count", "5000", "--full", "--passphrase-file", dir.path("pw"),
                                  "--kdf-iter", "2"])
        print("full disk, _torture: \(run.summary)")
        XCTAssertNil(run.signal, run.stderr)
        XCTAssertNotEqual(run.exitStatus, 0, "the writer must report the full disk")
        let acknowledged = run.stdout.split(separator: "\n").compactMap { $0.hasPrefix("ack ") ? Int($0.dropFirst(4)) : nil }
        let last = try XCTUnwrap(acknowledged.last, "some commits fit before the limit: \(run.stderr)")
        XCTAssertGreaterThan(last, 10)

        var configuration = Configuration(encryption: .passphrase("pw"), cipher: CipherOptions(kdfIterations: 2))
        configuration.readerCount = 0
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        try database.read { db in
            XCTAssertEqual(try db.fetchValue(String.self, sql: "PRAGMA integrity_check"), "ok")
            let top = try db.fetchValue(Int.self, sql: "SELECT max(id) FROM txn") ?? 0
            XCTAssertGreaterThanOrEqual(top, last, "an acknowledged commit is missing")
            let bad = try db.fetchValue(Int.self, sql: """
                SELECT count(*) FROM txn WHERE rows != 1 + (id * 7919) % 13
                   OR rows != (SELECT count(*) FROM entry WHERE entry.txn = txn.id)
                """)
            XCTAssertEqual(bad, 0, "a partial transaction is visible")
        }
        print("full disk, _torture: \(last) acknowledged, all present, integrity ok")
    }

    func testRepairHittingAFullDiskLeavesNoOutput() throws {
        let input = dir.path("big.db"), output = dir.path("out.db")
        let made = try Shell.run("/usr/bin/sqlcipher", ["-batch", input], input: """
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
}
