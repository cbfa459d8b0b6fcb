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
        try createTable(database)

        coffer_testvfs_fail(Int32(COFFER_TESTVFS_FAULT_WRITE), Int64.max, 0, 0)
        for id in 1...10 {
            try database.write { db in try insert(id...id, .zeros, db) }
        }
        let smallCommits = coffer_testvfs_fault_operations_seen()
        let walBefore = try fileSize(path + "-wal")
        coffer_testvfs_fail(Int32(COFFER_TESTVFS_FAULT_WRITE), Int64.max, 0, 0)
        try database.write { db in try insert(11...210, .zeros, db) }
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
        try createTable(database)
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
            try database.write { db in try insert((id + 1)...(id + rows), .random, db) }
            id += rows
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

    /// A transaction bigger than its page cache spills frames, then changes pages it spilled: SQLite
    /// overwrites those frames in place and, at the commit, rewrites the checksums of every frame from the
    /// first one changed to the commit frame (24-byte writes below the WAL's end, after the commit frame's
    /// page). The files as another process copies them right after the commit (what a crash would leave)
    /// reopen with every row: recovery walks the checksums, so a rewritten header still in memory would
    /// have cut the transaction off.
    func testACommitThatRewroteItsFramesIsWholeInTheFileAtOnce() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("spill.db")
        var configuration = configuration(.passphrase("spill"))
        configuration.cacheSizeKiB = 64
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        try createTable(database)
        try database.write { db in
            try insert(1...400, .random, db)
            try db.execute(sql: "UPDATE t SET b = randomblob(?)", arguments: [Self.rowBytes])
        }
        let digest = "SELECT count(*) || ':' || group_concat(hex(substr(b, 1, 8)), '') FROM (SELECT b FROM t ORDER BY id)"
        let expected = try database.read { db in try db.fetchValue(String.self, sql: digest) }
        let copy = directory.path("copy")
        try FileManager.default.createDirectory(atPath: copy, withIntermediateDirectories: true)
        // `cp` in a process of its own: this process closes no descriptor of the open database.
        let result = try Shell.run("/bin/cp", [path, path + "-wal", copy])
        XCTAssertEqual(result.status, 0, result.stderr)
        let reopened = try Database(path: copy + "/spill.db", configuration: configuration)
        let copied = try reopened.read { db in try db.fetchValue(String.self, sql: digest) }
        XCTAssertEqual(try reopened.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 400)
        XCTAssertTrue(copied == expected, "the copy's rows differ from the committed ones")
        try reopened.close()
    }

    /// A transaction that spilled frames and then rolled back leaves nothing behind to be written later:
    /// a second `Database` on the file commits over the same WAL frames, the first writes again, and every
    /// committed row is there. (Frames still in the first one's buffer, written at its next read of the
    /// WAL, would have overwritten the second one's commit.)
    func testASpilledTransactionThatRollsBackLeavesNoFramesToWriteLater() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("two.db")
        var small = configuration(.passphrase("two"))
        small.cacheSizeKiB = 64
        let first = try Database(path: path, configuration: small)
        defer { try? first.close() }
        try createTable(first)
        struct Abandoned: Error {}
        XCTAssertThrowsError(
            try first.write { db in
                try insert(1...60, .random, db)
                throw Abandoned()
            })
        let second = try Database(path: path, configuration: configuration(.passphrase("two")))
        defer { try? second.close() }
        try second.write { db in try insert(1001...1050, .zeros, db) }
        try first.write { db in try db.execute(sql: "INSERT INTO t(id, b) VALUES (2000, zeroblob(10))") }
        let check = "SELECT count(*) || ' ' || sum(length(b)) FROM t"
        XCTAssertEqual(try second.read { db in try db.fetchValue(String.self, sql: check) }, "51 \(50 * Self.rowBytes + 10)")
        XCTAssertEqual(try second.read { db in try db.fetchValue(String.self, sql: "PRAGMA integrity_check") }, "ok")
    }

    /// What a row's `b` holds: ``rowBytes`` zero bytes, or as many random ones.
    private enum Blob: String {
        case zeros = "zeroblob"
        case random = "randomblob"
    }

    /// `t(id INTEGER PRIMARY KEY, b BLOB)`, the table every test writes.
    private func createTable(_ database: Database) throws {
        try database.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, b BLOB)") }
    }

    /// Inserts a row into `t` for each id in `ids`, in the caller's transaction.
    private func insert(_ ids: ClosedRange<Int>, _ blob: Blob, _ db: Connection) throws {
        for id in ids {
            try db.execute(sql: "INSERT INTO t(id, b) VALUES (?, \(blob.rawValue)(?))", arguments: [id, Self.rowBytes])
        }
    }

    private func fileSize(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
    }
}
