import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `kill -9` at random moments: a child `coffer-torture` writes numbered transactions and prints
/// `ack N` after each commit; the parent SIGKILLs it after a seeded number of acks (while it keeps
/// committing, checkpointing and — in one mode — backing up; in another, while `interrupt()` stops
/// transactions at random moments), reopens, and checks that every
/// acknowledged transaction is there, whole, and nothing partial is visible.
///
/// Rounds: `COFFER_KILL_ROUNDS` (default 36), seed: `COFFER_KILL_SEED` (default 20261122).
final class KillTests: XCTestCase {
    enum Mode: CaseIterable {
        case commits, checkpointStorm, backups, interrupts
    }

    func testSIGKILLNeverLosesAnAcknowledgedCommitOrShowsAPartialOne() throws {
        let rounds = TestKnob.value("COFFER_KILL_ROUNDS", default: 36)
        let seed: UInt64 = TestKnob.value("COFFER_KILL_SEED", default: 20_261_122)
        var random = SeededGenerator(seed: seed)
        let directory = try TemporaryDirectory()
        let path = directory.path("kill.db")
        let backups = directory.path("backups")
        var acknowledged = 0
        var killedDuringBackup = 0
        var interrupted = 0
        for round in 0..<rounds {
            let mode = Mode.allCases[round % Mode.allCases.count]
            var arguments = [
                path, "--passphrase-env", "COFFER_TEST_PASSPHRASE", "--kdf-iter", "2",
            ]
            switch mode {
            case .commits: break
            case .checkpointStorm: arguments += ["--checkpoint-threshold", "4"]
            case .backups: arguments += ["--checkpoint-threshold", "8", "--backup-dir", backups, "--backup-pages", "6"]
            case .interrupts: arguments += ["--checkpoint-threshold", "8", "--interrupt-every-ms", "10"]
            }
            let killAfter = Int.random(in: 1...40, using: &random)
            let lastAck = try runAndKill(arguments: arguments, afterAcks: killAfter, interrupted: &interrupted)
            acknowledged = max(acknowledged, lastAck)
            let committed = try TortureCheck.committedPrefix(path: path)
            XCTAssertGreaterThanOrEqual(
                committed, acknowledged, "round \(round) (\(mode)): acknowledged \(acknowledged), found \(committed)")
            acknowledged = committed
            if mode == .backups, FileManager.default.fileExists(atPath: backups) {
                // Whatever moment the kill hit, the newest intact generation restores to a consistent prefix.
                if Self.hasTemporaryFiles(backups) { killedDuringBackup += 1 }
                let restored = directory.path("restored-\(round).db")
                if try BackupDirectory(url: URL(fileURLWithPath: backups)).latestRestorable() != nil {
                    try Database.restore(
                        from: URL(fileURLWithPath: backups), to: restored, configuration: BackupFixture.configuration())
                    let inBackup = try TortureCheck.committedPrefix(path: restored)
                    XCTAssertLessThanOrEqual(inBackup, committed)
                    try? FileManager.default.removeItem(atPath: restored)
                }
            }
            if testRun?.failureCount ?? 0 > 0 { break }
        }
        if rounds >= 8 {
            XCTAssertGreaterThan(interrupted, 0, "interrupt() must have stopped some transactions of the interrupt rounds")
        }
        print(
            "kill test: \(rounds) rounds, seed \(seed), \(acknowledged) transactions committed, \(killedDuringBackup) kills left a backup half-written, \(interrupted) transactions interrupted"
        )
    }

    private static func hasTemporaryFiles(_ directory: String) -> Bool {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).contains { $0.hasPrefix(".tmp-") }
    }

    /// Runs the child, SIGKILLs it once `afterAcks` acks arrived, drains what it printed, and returns the
    /// highest acknowledged transaction number.
    private func runAndKill(arguments: [String], afterAcks: Int, interrupted: inout Int) throws -> Int {
        var acks = 0
        var last = 0
        let end = try ChildKill.run(
            executable: Shell.tortureExecutable, arguments: arguments,
            environment: ["COFFER_TEST_PASSPHRASE": BackupFixture.passphrase]
        ) { line in
            if line.hasPrefix("ack "), let number = Int(line.dropFirst(4)) {
                acks += 1
                last = max(last, number)
            } else if line.hasPrefix("interrupted ") {
                interrupted += 1
            }
            return acks >= afterAcks
        }
        XCTAssertTrue(end.killed, "the child must die by SIGKILL, not exit")
        return last
    }
}
