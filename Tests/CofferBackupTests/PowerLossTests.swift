import Coffer
import CofferTestSupport
import CofferTestVFS
import Foundation
import XCTest

/// Simulated power cuts through the crash VFS (see `CofferTestVFS.h`): a writer commits numbered
/// transactions (with a checkpoint every 10) until the power goes off at a seeded write or sync; the
/// files then lose or tear, sector by sector, whatever was written since their last fsync.
///
/// - `synchronous = FULL`: no acknowledged transaction may be lost, and the database must be whole.
/// - `synchronous = NORMAL`: the database must be whole; the acknowledged transactions lost are
///   measured and printed (WAL commits are not fsynced, so the tail since the last checkpoint's sync
///   can go).
///
/// Rounds: `COFFER_POWER_ROUNDS` (default 30 per mode); seed: `COFFER_POWER_SEED` (default 4242).
final class PowerLossTests: XCTestCase {
    private var rounds: Int { TestKnob.value("COFFER_POWER_ROUNDS", default: 30) }
    private var seed: UInt64 { TestKnob.value("COFFER_POWER_SEED", default: 4242) }

    func testFullSynchronousLosesNoAcknowledgedCommit() throws {
        let outcome = try run(synchronous: .full)
        XCTAssertEqual(outcome.lost, 0, "FULL must keep every acknowledged commit")
        print(
            "power loss, FULL: \(outcome.rounds) cuts, \(outcome.reverted) sectors reverted, \(outcome.acknowledged) acknowledged commits, 0 lost"
        )
    }

    func testNormalSynchronousStaysConsistentAndLosesOnlyTheUnsyncedTail() throws {
        let outcome = try run(synchronous: .normal)
        print(
            "power loss, NORMAL: \(outcome.rounds) cuts, \(outcome.reverted) sectors reverted, \(outcome.acknowledged) acknowledged commits, \(outcome.lost) lost in \(outcome.roundsWithLoss) cuts (at most \(outcome.worstLoss) in one, all after the last checkpoint)"
        )
    }

    struct Outcome {
        var rounds = 0, acknowledged = 0, lost = 0, roundsWithLoss = 0, worstLoss = 0
        var reverted: Int64 = 0
    }

    private func run(synchronous: SynchronousMode) throws -> Outcome {
        var random = SeededGenerator(seed: seed)
        var outcome = Outcome()
        for round in 0..<rounds {
            let directory = try TemporaryDirectory()
            let path = directory.path("power.db")
            XCTAssertEqual(coffer_testvfs_register(1), 0)
            var configuration = BackupFixture.configuration(synchronous: synchronous)
            configuration.readerCount = 0
            // Checkpoints only where the loop asks for them, so a seed replays the same I/O sequence.
            configuration.checkpointThreshold = 1_000_000
            configuration.idleCheckpointDelay = 3600
            var acknowledged = 0
            var lastCheckpointed = 0
            do {
                let database = try Database(path: path, configuration: configuration)
                try database.write { db in
                    try db.execute(sql: "CREATE TABLE txn(id INTEGER PRIMARY KEY, rows INTEGER NOT NULL)")
                    try db.execute(
                        sql: "CREATE TABLE entry(txn INTEGER NOT NULL, seq INTEGER NOT NULL, payload BLOB, PRIMARY KEY(txn, seq))"
                    )
                }
                try database.checkpoint(.passive)
                coffer_testvfs_arm(Int64.random(in: 1...500, using: &random))
                for id in 1...400 {
                    do {
                        try database.write { db in
                            try db.execute(
                                sql: "INSERT INTO txn(id, rows) VALUES (?, ?)", arguments: [id, TortureCheck.rows(for: id)])
                            for seq in 0..<TortureCheck.rows(for: id) {
                                let payload = Data(repeating: UInt8(truncatingIfNeeded: id &+ seq), count: 150 + seq * 41)
                                try db.execute(
                                    sql: "INSERT INTO entry(txn, seq, payload) VALUES (?, ?, ?)", arguments: [id, seq, payload])
                            }
                        }
                        acknowledged = id
                        if id % 10 == 0 {
                            try database.checkpoint(.passive)
                            lastCheckpointed = id
                        }
                    } catch {
                        break
                    }
                }
                coffer_testvfs_cut_now()
                try? database.close()
            }
            outcome.reverted += coffer_testvfs_apply_power_loss(seed &+ UInt64(round))
            XCTAssertEqual(coffer_testvfs_unregister(), 0)
            // The -shm lives in memory on a real machine: it does not survive the cut.
            try? FileManager.default.removeItem(atPath: path + "-shm")
            let committed = try TortureCheck.committedPrefix(path: path)
            let lost = max(0, acknowledged - committed)
            if synchronous == .full {
                XCTAssertGreaterThanOrEqual(
                    committed, acknowledged, "round \(round): acknowledged \(acknowledged), found \(committed)")
            } else {
                XCTAssertGreaterThanOrEqual(
                    committed, min(lastCheckpointed, acknowledged), "round \(round): a checkpointed commit was lost")
            }
            outcome.rounds += 1
            outcome.acknowledged += acknowledged
            outcome.lost += lost
            outcome.worstLoss = max(outcome.worstLoss, lost)
            if lost > 0 { outcome.roundsWithLoss += 1 }
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        return outcome
    }
}
