import Coffer
import CofferTestSupport
import CofferTestVFS
import Foundation
import XCTest

/// The "coffer" VFS writes a commit's WAL frames with one call (`Sources/CofferVFS/walwrites.c`): counted
/// through the test VFS beneath it, and read by another process while the commits happen.
final class WALWriteCombiningTests: XCTestCase {
    private static let rowBytes = 3000

    private func configuration(_ encryption: Encryption) -> Configuration {
        var configuration = Configuration(
            encryption: encryption, cipher: CipherOptions(keyDerivation: .pbkdf2SHA1(rounds: 2)))
        // No checkpoint writes the main file while the writes are counted.
        configuration.checkpointThreshold = 1_000_000
        configuration.idleCheckpointDelay = 3600
        return configuration
    }

    /// The test VFS counts every `xWrite` that reaches it. A one-row commit changes one or two pages (two
    /// or four writes from SQLite: a header and a page each) and reaches it as one write; a commit of
    /// some 200 frames, more than one write can carry (0x1ffff bytes), as one write per 31 frames.
    func testACommitReachesTheFileAsOneWrite() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("combined.db")
        XCTAssertEqual(coffer_testvfs_register(1), 0)
        var registered = true
        defer { if registered { _ = coffer_testvfs_unregister() } }
        let database = try Database(path: path, configuration: configuration(.passphrase("combined")))
        defer { try? database.close() }
        try database.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }

        coffer_testvfs_fail(Int32(COFFER_TESTVFS_FAULT_WRITE), Int64.max, 0, 0)
        for id in 1...10 {
            try database.write { db in
                try db.execute(sql: "INSERT INTO t(id, b) VALUES (?, zeroblob(?))", arguments: [id, Self.rowBytes])
            }
        }
        let smallCommits = coffer_testvfs_fault_operations_seen()
        let walBefore = try fileSize(path + "-wal")
        coffer_testvfs_fail(Int32(COFFER_TESTVFS_FAULT_WRITE), Int64.max, 0, 0)
        try database.write { db in
            for id in 11...210 {
                try db.execute(sql: "INSERT INTO t(id, b) VALUES (?, zeroblob(?))", arguments: [id, Self.rowBytes])
            }
        }
        let bigCommit = coffer_testvfs_fault_operations_seen()
        coffer_testvfs_fail(0, 0, 0, 0)
        let bytes = try fileSize(path + "-wal") - walBefore
        let frames = bytes / (4096 + 24)

        XCTAssertEqual(smallCommits, 10, "one write per one-row commit")
        XCTAssertGreaterThan(frames, 150)
        // Each write carries what fits in 0x1ffff bytes: at least that less one page.
        let fewest = (bytes + 0x1ffff - 1) / 0x1ffff
        let most = (bytes + 0x1ffff - 4096 - 1) / (0x1ffff - 4096)
        XCTAssertTrue((fewest...most).contains(Int(bigCommit)), "\(bigCommit) writes for \(frames) frames")
        XCTAssertEqual(try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 210)
        try database.close()
        // Every frame is where SQLite put it: the file reopens through the plain unix VFS, checks and reads whole.
        XCTAssertEqual(coffer_testvfs_unregister(), 0)
        registered = false
        let reopened = try Database(path: path, configuration: configuration(.passphrase("combined")))
        XCTAssertEqual(try reopened.read { db in try db.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
        XCTAssertEqual(
            try reopened.read { db in try db.fetchValue(Int.self, sql: "SELECT sum(length(b)) FROM t") }, 210 * Self.rowBytes)
        try reopened.close()
    }

    /// Python's `sqlite3` (the system SQLite, not Coffer's) reads the file in a loop while Coffer commits
    /// one-row and 300-row transactions (one write, and several): every read sees whole commits (the
    /// row count never falls, every row has its length), none fails, and the last sees every row.
    func testAnotherProcessReadsOnlyWholeCommitsWhileTheyAreWritten() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.db")
        let database = try Database(path: path, configuration: configuration(.none))
        defer { try? database.close() }
        try database.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }
        let stop = directory.path("stop")
        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        reader.arguments = [
            "-c",
            """
            import os, sqlite3, sys
            path, stop, size = sys.argv[1], sys.argv[2], int(sys.argv[3])
            reads = errors = last = 0
            while True:
                done = os.path.exists(stop)
                try:
                    con = sqlite3.connect(path, timeout=5)
                    count, total = con.execute("SELECT count(*), coalesce(sum(length(b)), 0) FROM t").fetchone()
                    con.close()
                    reads += 1
                    if total != count * size or count < last:
                        errors += 1
                        print("torn", count, total, last, file=sys.stderr)
                    last = count
                except Exception as error:
                    errors += 1
                    print("error", error, file=sys.stderr)
                if done:
                    break
            print(reads, errors, last)
            """,
            path, stop, "\(Self.rowBytes)",
        ]
        let output = Pipe()
        reader.standardOutput = output
        try reader.run()
        var id = 0
        for round in 0..<60 {
            let rows = round % 3 == 2 ? 300 : 1
            try database.write { db in
                for _ in 0..<rows {
                    id += 1
                    try db.execute(sql: "INSERT INTO t(id, b) VALUES (?, randomblob(?))", arguments: [id, Self.rowBytes])
                }
            }
        }
        _ = FileManager.default.createFile(atPath: stop, contents: Data())
        reader.waitUntilExit()
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let fields = printed.split(separator: " ").compactMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        XCTAssertEqual(reader.terminationStatus, 0)
        XCTAssertEqual(fields.count, 3, printed)
        guard fields.count == 3 else { return }
        XCTAssertGreaterThan(fields[0], 1, "reads")
        XCTAssertEqual(fields[1], 0, "reads that failed or saw part of a commit")
        XCTAssertEqual(fields[2], id, "the last read's rows")
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
