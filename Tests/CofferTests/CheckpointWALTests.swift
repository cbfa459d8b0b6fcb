import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferEngine

final class CheckpointWALTests: XCTestCase {
    /// 20,000 one-row commits: the background checkpointer must keep the -wal file bounded without
    /// SQLite's inline auto-checkpoint. Bound: 4 × the threshold (1000 pages of 4096 + 24 bytes ≈ 4 MB),
    /// i.e. 16.5 MB; without checkpoints the WAL would pass 80 MB.
    func testWALStaysBoundedOver20000Commits() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("wal.db")
        let db = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        try db.write { try $0.execute(sql: "CREATE TABLE log(id INTEGER PRIMARY KEY, message TEXT)") }
        let bound = 4 * 1000 * (4096 + 24)
        var largest = 0
        for i in 0..<20_000 {
            try db.write { try $0.execute(sql: "INSERT INTO log(message) VALUES (?)", arguments: ["message \(i)"]) }
            if i % 100 == 0 { largest = max(largest, FileScan.size(path + "-wal")) }
        }
        largest = max(largest, FileScan.size(path + "-wal"))
        print("CheckpointWALTests: largest -wal over 20,000 commits: \(largest) bytes (bound \(bound))")
        XCTAssertLessThan(largest, bound, "largest -wal seen: \(largest) bytes")
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM log") }, 20_000)
        try db.close()
        XCTAssertEqual(FileScan.size(path + "-wal"), 0, "close truncates the WAL")
    }

    func testIdleDatabaseTruncatesItsWAL() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("idle.db")
        var configuration = Configuration()
        configuration.idleCheckpointDelay = 0.2
        let db = try Database(path: path, configuration: configuration)
        try db.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        try db.write { try $0.execute(sql: "INSERT INTO t VALUES (1)") }
        XCTAssertGreaterThan(FileScan.size(path + "-wal"), 0)
        // Poll (bounded) for the idle checkpoint; the observable is the file size itself.
        let deadline = Date().addingTimeInterval(10)
        while FileScan.size(path + "-wal") > 0 && Date() < deadline { usleep(20_000) }
        XCTAssertEqual(FileScan.size(path + "-wal"), 0)
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 1)
    }
}

/// While bulk work writes (a live migration's worker), checkpoints wait for a WAL eight times the
/// threshold; when it stops, the background checkpoint starts without waiting for another commit. What
/// is observed is SQLite's own count of frames copied back (`nBackfill`, bytes 96–99 of the `-shm`).
final class CheckpointBulkWritesTests: XCTestCase {
    private func backfilledFrames(_ path: String) throws -> UInt32 {
        let shm = try Data(contentsOf: URL(fileURLWithPath: path + "-shm"))
        guard shm.count >= 100 else { return 0 }
        return shm[96..<100].withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    func testBulkWritesRaiseTheThresholdAndTheCheckpointRunsWhenTheyEnd() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("bulk.db")
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.checkpointThreshold = 10
        configuration.idleCheckpointDelay = 600
        let db = try Database(path: path, configuration: configuration)
        let checkpointer = try XCTUnwrap(db.checkpointer)
        try db.write { try $0.execute(sql: "CREATE TABLE log(id INTEGER PRIMARY KEY, message TEXT)") }
        try db.checkpoint(.truncate)

        checkpointer.beginBulkWrites()
        // 20 one-row commits: 20 frames or more (past 10), fewer than 80.
        for i in 0..<20 {
            try db.write { try $0.execute(sql: "INSERT INTO log(message) VALUES (?)", arguments: ["message \(i)"]) }
        }
        let frames = (FileScan.size(path + "-wal") - 32) / (4096 + 24)
        XCTAssertGreaterThanOrEqual(frames, 20)
        XCTAssertLessThan(frames, 80)
        // A checkpoint a commit scheduled runs on the checkpointer's queue: this waits for the queue.
        checkpointer.releaseMemory()
        XCTAssertEqual(try backfilledFrames(path), 0, "no checkpoint below 8 × the threshold during bulk writes")

        checkpointer.endBulkWrites()
        let deadline = Date().addingTimeInterval(20)
        while try backfilledFrames(path) == 0 && Date() < deadline { usleep(10_000) }
        XCTAssertGreaterThan(try backfilledFrames(path), 0, "the checkpoint started when bulk writes ended")
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM log") }, 20)
        try db.close()
    }
}
