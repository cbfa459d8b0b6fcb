import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Observation through the database's upkeep: a rekey (the writer is replaced), checkpoints (background,
/// idle, PASSIVE and TRUNCATE), backups running beside the writer, and the close and reopen of a restore.
/// Each observed value must be the database at some commit, in commit order (here: `max(id)` only
/// grows), and the last one the state after the last commit.
final class ObservationMaintenanceTests: XCTestCase {
    private static let commits = 160

    private func makeConfiguration() -> Configuration {
        var configuration = Configuration(encryption: .rawKey(Data(repeating: 3, count: 32)))
        configuration.checkpointThreshold = 8  // background checkpoints every few commits
        configuration.idleCheckpointDelay = 0.01
        configuration.externalChangeLatency = 0.01  // TRUNCATE checkpoints move data_version: re-fetches
        return configuration
    }

    private func observeNewest(_ database: Database, on queue: DispatchQueue) -> (ObservationHandle, ObservedValues<Int>) {
        let observed = ObservedValues<Int>()
        let handle = database.observe(
            options: ObservationOptions(coalescingInterval: 0), on: queue,
            { try $0.fetchValue(Int.self, sql: "SELECT coalesce(max(id), 0) FROM item") ?? -1 },
            onChange: { observed.append($0) })
        return (handle, observed)
    }

    func testValuesFollowCommitsThroughRekeyCheckpointsAndBackups() throws {
        let directory = try TemporaryDirectory()
        let backups = URL(fileURLWithPath: directory.path("backups"))
        var configuration = makeConfiguration()
        let database = try Database(path: directory.path("app.db"), configuration: configuration)
        try database.write { try $0.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, payload BLOB)") }
        let (handle, newest) = observeNewest(database, on: DispatchQueue(label: "observation-maintenance"))
        XCTAssertTrue(newest.wait { values, _ in values == [0] })

        let backupsDone = DispatchGroup()
        for id in 1...Self.commits {
            try database.write { db in
                try db.execute(sql: "INSERT INTO item(id, payload) VALUES (?, zeroblob(2000))", arguments: [id])
            }
            switch id {
            case Self.commits / 4:
                try database.changePassphrase(to: .rawKey(Data(repeating: 4, count: 32)))
                // Backups copy pages beside the writer, holding the checkpoint gate.
                DispatchQueue.global().async(group: backupsDone) {
                    do {
                        for _ in 0..<3 { _ = try database.backup(to: backups, pagesPerStep: 4) }
                    } catch {
                        XCTFail("backup failed: \(error)")
                    }
                }
            case Self.commits / 2: try database.checkpoint(.truncate)
            case 3 * Self.commits / 4: try database.checkpoint(.passive)
            default: break
            }
        }
        backupsDone.wait()
        XCTAssertTrue(newest.wait { values, _ in values.last == Self.commits }, "last \(newest.values.last ?? -1)")
        let values = newest.values
        XCTAssertEqual(values, values.sorted(), "values went back in time")
        XCTAssertEqual(Set(values).count, values.count, "a duplicate was delivered")

        // Restoring closes this database: its observation ends, and the restored file is observed anew.
        configuration.encryption = .rawKey(Data(repeating: 4, count: 32))
        let generation = try database.restore(fromLatestBackup: backups)
        XCTAssertGreaterThan(generation.id, 0)
        let delivered = newest.values.count
        let reopened = try Database(path: directory.path("app.db"), configuration: configuration)
        let restored = try reopened.read { try $0.fetchValue(Int.self, sql: "SELECT coalesce(max(id), 0) FROM item") } ?? -1
        let (again, afterRestore) = observeNewest(reopened, on: DispatchQueue(label: "observation-restored"))
        XCTAssertTrue(afterRestore.wait { values, _ in values == [restored] }, "\(afterRestore.values)")
        try reopened.write { try $0.execute(sql: "INSERT INTO item(id) VALUES (?)", arguments: [restored + 1]) }
        XCTAssertTrue(afterRestore.wait { values, _ in values == [restored, restored + 1] }, "\(afterRestore.values)")
        XCTAssertEqual(newest.values.count, delivered, "nothing reaches an observation of the closed database")
        withExtendedLifetime((handle, again)) {}
    }
}
