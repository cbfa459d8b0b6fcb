import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// `changePassphrase` while four threads read in a loop: every read succeeds and sees every row.
///
/// The readers reopened after a rekey find a WAL index nobody has initialised yet; one of them recovers
/// it while the others must wait under their busy timeout rather than fail with SQLITE_BUSY_RECOVERY.
/// Seeded: `COFFER_STRESS_SEED` replays a run (the seed picks each rekey's new passphrase kind and how
/// many reads must complete between rekeys); `COFFER_STRESS_REKEYS` sets the number of rekeys
/// (40 by default). Before readers got their busy timeout at open, 4 of 7 runs of 150 rekeys failed.
final class ChangePassphraseStressTests: XCTestCase {
    func testRekeysUnderFourLiveReaders() throws {
        let seed: UInt64 = TestKnob.value("COFFER_STRESS_SEED", default: 18)
        let rekeys = TestKnob.value("COFFER_STRESS_REKEYS", default: 40)
        var random = SeededGenerator(seed: seed)
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("rekey.db"), configuration: Configuration(encryption: .passphrase("start")))
        defer { try? database.close() }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            for i in 0..<200 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) }
        }
        let progress = ReadProgress()
        let group = DispatchGroup()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                while !progress.isStopped {
                    do {
                        let count = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }
                        progress.record(count == 200 ? nil : "read \(count ?? -1) rows")
                    } catch {
                        progress.record("\(error)")
                    }
                }
            }
        }
        for round in 0..<rekeys {
            progress.waitForReads(1 + random.next(upTo: 20))
            let encryption: Encryption =
                random.next(upTo: 2) == 0
                ? .passphrase("round \(round)") : .rawKey(Data((0..<32).map { _ in UInt8(random.next(upTo: 256)) }))
            try database.changePassphrase(to: encryption)
        }
        progress.waitForReads(4)
        progress.stop()
        group.wait()
        XCTAssertEqual(progress.failures, [], "seed \(seed)")
    }
}

/// Counts the readers' reads and keeps their failures.
private final class ReadProgress: @unchecked Sendable {
    private let condition = NSCondition()
    private var reads = 0
    private var stopped = false
    private var failed: [String] = []

    var isStopped: Bool { condition.withLock { stopped } }
    var failures: [String] { condition.withLock { failed } }

    func record(_ failure: String?) {
        condition.withLock {
            reads += 1
            if let failure { failed.append(failure) }
            condition.broadcast()
        }
    }

    /// Blocks until `count` more reads have finished (or the readers were stopped).
    func waitForReads(_ count: Int) {
        condition.withLock {
            let target = reads + count
            while reads < target && !stopped { condition.wait() }
        }
    }

    func stop() { condition.withLock { stopped = true } }
}
