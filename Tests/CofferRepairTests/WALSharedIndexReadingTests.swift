import Coffer
import CofferFormat
import CofferTestSupport
import Foundation
import XCTest

/// `WALSharedIndex` (the `-shm` reader shared by checkpoint metrics and `coffer stats`) on wal-indexes that
/// SQLite itself wrote: Python's sqlite3 and Coffer's own writer.
final class WALSharedIndexReadingTests: XCTestCase {
    /// Python's sqlite3 commits three transactions and copies the `-shm` and `-wal` while its connection is
    /// open (closing would checkpoint and delete them).
    func testReadsTheLastCommittedFrameWrittenByAnotherSQLite() throws {
        let directory = try TemporaryDirectory()
        let database = directory.path("python.db")
        let script = """
            import shutil, sqlite3, sys
            db = sqlite3.connect(sys.argv[1], isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL"); db.execute("PRAGMA wal_autocheckpoint=0")
            db.execute("CREATE TABLE t(x)")
            for i in range(2): db.execute("INSERT INTO t VALUES (?)", (i,))
            shutil.copy(sys.argv[1] + "-shm", sys.argv[1] + ".shm-copy")
            shutil.copy(sys.argv[1] + "-wal", sys.argv[1] + ".wal-copy")
            print(db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[1])
            """
        let result = try Shell.run("/usr/bin/python3", ["-c", script, database])
        XCTAssertEqual(result.status, 0, result.stderr)
        let index = try XCTUnwrap(WALSharedIndex(path: database + ".shm-copy"))
        // Three commits on an empty file: page 1 (schema), then page 2 twice, each one frame at least.
        XCTAssertGreaterThanOrEqual(index.maxFrame, 3)
        XCTAssertEqual(index.backfilledFrames, 0, "copied before the checkpoint")
        XCTAssertEqual(Int32(result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)), Int32(index.maxFrame))
        XCTAssertTrue(index.describes(walPath: database + ".wal-copy"))
        XCTAssertFalse(index.describes(walPath: database + ".missing"))
    }

    /// Coffer's live wal-index: the backfill follows a checkpoint; a disagreeing header copy or a short file
    /// is refused rather than read.
    func testFollowsCheckpointsAndRefusesATornHeader() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("coffer.db")
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("shm")))
        defer { try? database.close() }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            for value in 0..<50 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) }
        }
        let written = try XCTUnwrap(WALSharedIndex(databasePath: path))
        XCTAssertGreaterThan(written.maxFrame, 0)
        XCTAssertTrue(written.describes(walPath: path + "-wal"))
        try database.checkpoint(.passive)
        let checkpointed = try XCTUnwrap(WALSharedIndex(databasePath: path))
        XCTAssertEqual(checkpointed.backfilledFrames, checkpointed.maxFrame)

        var bytes = try Data(contentsOf: URL(fileURLWithPath: path + "-shm"))
        bytes[48 + 16] ^= 0xFF  // mxFrame of the second copy only: a writer caught half-way
        let torn = directory.path("torn-shm")
        try bytes.write(to: URL(fileURLWithPath: torn))
        XCTAssertNil(WALSharedIndex(path: torn))
        try bytes.prefix(90).write(to: URL(fileURLWithPath: torn))
        XCTAssertNil(WALSharedIndex(path: torn))
        XCTAssertNil(WALSharedIndex(path: directory.path("absent-shm")))
    }
}
