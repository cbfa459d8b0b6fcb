import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class BackupRestoreTests: XCTestCase {
    func testFullBackupRestoresTheSameRows() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: 500)
        let backups = directory.url.appendingPathComponent("backups")
        let generation = try database.backup(to: backups)
        XCTAssertEqual(generation.kind, .full)
        XCTAssertEqual(generation.chain, [generation.id])
        let expected = try BackupFixture.dump(database)
        try database.close()

        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
        // The backup is an ordinary SQLCipher file: the sqlcipher shell opens it with the passphrase.
        let shell = try Shell.sqlcipher(
            directory.path("backups/000001.full.db"), passphrase: BackupFixture.passphrase,
            "PRAGMA kdf_iter = 2; SELECT count(*) FROM item;")
        XCTAssertEqual(shell.stdout.split(separator: "\n").last.map(String.init), "500", shell.stderr)
    }

    func testIncrementalBackupsCopyOnlyChangedPagesAndRestoreEachGeneration() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: 20_000)
        let backups = directory.url.appendingPathComponent("backups")
        let full = try database.backup(to: backups)
        let atFull = try BackupFixture.dump(database)

        try database.write { db in
            try db.execute(sql: "UPDATE item SET n = n + 1 WHERE id BETWEEN 1000 AND 1999")
        }
        let first = try database.backup(to: backups)
        XCTAssertEqual(first.kind, .incremental)
        XCTAssertEqual(first.chain, [full.id, first.id])
        XCTAssertLessThan(first.byteCount * 5, full.byteCount, "an increment of 1,000 rows must be far smaller than the full copy")
        let atFirst = try BackupFixture.dump(database)
        print("increment for 1,000 clustered rows: \(first.byteCount) bytes (\(first.storedPageCount) pages) vs full \(full.byteCount) bytes (\(full.pageCount) pages)")

        try database.write { db in
            try db.execute(sql: "DELETE FROM item WHERE id > 19000")
            try db.execute(sql: "INSERT INTO item(body, n) VALUES ('new', -1)")
        }
        let second = try database.backup(to: backups, kind: .incremental)
        XCTAssertEqual(second.chain, [full.id, first.id, second.id])
        let atSecond = try BackupFixture.dump(database)
        try database.close()

        for (generation, expected) in [(full, atFull), (first, atFirst), (second, atSecond)] {
            let restored = directory.path("restored-\(generation.id).db")
            try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration(), generation: generation.id)
            XCTAssertEqual(try BackupFixture.dump(path: restored), expected, "generation \(generation.id)")
        }
    }

    func testRestoreRefusesToOverwriteAndFallsBackPastADamagedGeneration() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: 100)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        let atFull = try BackupFixture.dump(database)
        try database.write { db in try db.execute(sql: "DELETE FROM item WHERE id < 50") }
        let increment = try database.backup(to: backups)
        try database.close()

        XCTAssertThrowsError(try Database.restore(from: backups, to: directory.path("app.db"), configuration: BackupFixture.configuration())) {
            XCTAssertEqual(($0 as? CofferError)?.code, .cantOpen)
        }
        // Damage the increment: restore takes the intact full generation instead.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: backups.appendingPathComponent(increment.dataFile).path))
        try handle.seek(toOffset: 100)
        handle.write(Data([0xff, 0x00, 0xff]))
        try handle.close()
        let restored = directory.path("restored.db")
        let chosen = try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(chosen.kind, .full)
        XCTAssertEqual(try BackupFixture.dump(path: restored), atFull)
    }

    func testWrongPassphraseIsReportedAsSuch() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: 10)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        try database.close()
        var wrong = BackupFixture.configuration()
        wrong.encryption = .passphrase("not it")
        XCTAssertThrowsError(try Database.restore(from: backups, to: directory.path("r.db"), configuration: wrong)) {
            XCTAssertEqual(($0 as? CofferError)?.code, .wrongPassphrase)
        }
    }

    func testPruningKeepsTheNewestChains() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 10)
        let backups = directory.url.appendingPathComponent("backups")
        for round in 0..<3 {
            try database.backup(to: backups, kind: .full)
            try database.write { db in try db.execute(sql: "INSERT INTO item(body, n) VALUES ('r', ?)", arguments: [round]) }
            try database.backup(to: backups)
        }
        try BackupDirectory(url: backups).prune(keepingChains: 2)
        let remaining = try Database.backupGenerations(in: backups)
        XCTAssertEqual(remaining.map(\.id), [3, 4, 5, 6])
        XCTAssertEqual(remaining.map(\.kind), [.full, .incremental, .full, .incremental])
    }

    func testVerifyFindsAFlippedPage() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        let database = try Database(path: path, configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: 300)
        try database.close()
        XCTAssertTrue(try Database.verify(path: path, configuration: BackupFixture.configuration()).isClean)

        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(4096 * 4 + 700))   // page 5
        let byte = try XCTUnwrap(handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: UInt64(4096 * 4 + 700))
        handle.write(Data([byte ^ 0x10]))
        try handle.close()
        let report = try Database.verify(path: path, configuration: BackupFixture.configuration())
        XCTAssertEqual(report.damagedPages, [5])
        XCTAssertFalse(report.isClean)
    }
}

final class IncrementalCostTests: XCTestCase {
    /// The honest worst case: 1,000 rows spread over the whole table touch nearly every leaf, and the
    /// increment approaches a full copy; the same 1,000 rows clustered touch a few dozen pages.
    func testIncrementSizeFollowsChangedPagesNotRows() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 20_000)
        let backups = directory.url.appendingPathComponent("backups")
        let full = try database.backup(to: backups)
        try database.write { db in try db.execute(sql: "UPDATE item SET body = body || 'c' WHERE id BETWEEN 5001 AND 6000") }
        let clustered = try database.backup(to: backups)
        try database.write { db in try db.execute(sql: "UPDATE item SET body = body || 's' WHERE id % 20 = 0") }
        let scattered = try database.backup(to: backups)
        XCTAssertEqual([clustered.kind, scattered.kind], [.incremental, .incremental])
        XCTAssertLessThan(clustered.storedPageCount, full.pageCount / 10)
        XCTAssertGreaterThan(scattered.storedPageCount, clustered.storedPageCount * 5)
        print("1,000 changed rows: clustered \(clustered.byteCount) bytes (\(clustered.storedPageCount) pages), scattered \(scattered.byteCount) bytes (\(scattered.storedPageCount) pages), full copy \(full.byteCount) bytes (\(full.pageCount) pages)")
    }
}

final class ChangeTrackingTests: XCTestCase {
    /// WAL restarts (after complete checkpoints) and truncations (idle TRUNCATE) renumber frames from 1:
    /// the tracker must notice by the new salts and keep every page.
    func testIncrementsSurviveWALRestartsAndTruncation() throws {
        let directory = try TemporaryDirectory()
        var configuration = BackupFixture.configuration()
        configuration.checkpointThreshold = 5
        let database = try Database(path: directory.path("app.db"), configuration: configuration)
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 1000)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        for round in 0..<30 {
            try database.write { db in
                try db.execute(sql: "UPDATE item SET n = n + 1 WHERE id % 30 = ?", arguments: [round])
                try db.execute(sql: "INSERT INTO item(body, n) VALUES ('grown', ?)", arguments: [round])
            }
            if round % 7 == 0 { try database.checkpoint(.truncate) }
            if round % 4 == 0 { try database.checkpoint(.passive) }
        }
        let increment = try database.backup(to: backups)
        XCTAssertEqual(increment.kind, .incremental)
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }

    /// A reader's old snapshot keeps the WAL from being copied completely: the increment waits, then
    /// reports `busy` rather than copying an inconsistent mix, and succeeds once the reader is done.
    func testAnOldReaderSnapshotMakesTheIncrementBusyNotWrong() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 100)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        let snapshotHeld = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let readerDone = DispatchSemaphore(value: 0)
        try database.write { db in try db.execute(sql: "UPDATE item SET n = -1 WHERE id = 1") }
        DispatchQueue.global().async {
            _ = try? database.read { db in
                _ = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM item")
                snapshotHeld.signal()
                release.wait()
            }
            readerDone.signal()
        }
        snapshotHeld.wait()
        try database.write { db in try db.execute(sql: "UPDATE item SET n = -2 WHERE id = 2") }
        XCTAssertThrowsError(try database.backup(to: backups, kind: .incremental)) {
            XCTAssertEqual(($0 as? CofferError)?.code, .busy)
        }
        release.signal()
        readerDone.wait()
        let increment = try database.backup(to: backups, kind: .incremental)
        XCTAssertEqual(increment.chain.count, 2)
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: BackupFixture.configuration())
        XCTAssertEqual(try BackupFixture.dump(path: restored), expected)
    }
}
