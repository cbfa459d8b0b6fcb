import Coffer
import CofferTestSupport
import Foundation
import XCTest

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
