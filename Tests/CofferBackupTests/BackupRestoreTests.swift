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
        XCTAssertLessThan(
            first.byteCount * 5, full.byteCount, "an increment of 1,000 rows must be far smaller than the full copy")
        let atFirst = try BackupFixture.dump(database)
        print(
            "increment for 1,000 clustered rows: \(first.byteCount) bytes (\(first.storedPageCount) pages) vs full \(full.byteCount) bytes (\(full.pageCount) pages)"
        )

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
            try Database.restore(
                from: backups, to: restored, configuration: BackupFixture.configuration(), generation: generation.id)
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

        XCTAssertThrowsError(
            try Database.restore(from: backups, to: directory.path("app.db"), configuration: BackupFixture.configuration())
        ) {
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
        let path = try BackupFixture.populatedFile(in: directory, rows: 300)
        XCTAssertTrue(try Database.verify(path: path, configuration: BackupFixture.configuration()).isClean)

        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(4096 * 4 + 700))  // page 5
        let byte = try XCTUnwrap(handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: UInt64(4096 * 4 + 700))
        handle.write(Data([byte ^ 0x10]))
        try handle.close()
        let report = try Database.verify(path: path, configuration: BackupFixture.configuration())
        XCTAssertEqual(report.damagedPages, [5])
        XCTAssertFalse(report.isClean)
    }

    /// One read of the file names both kinds of damaged page (a forged one, and one of zeros, which
    /// SQLCipher reads unchecked), while integrity_check on its own thread reports what they broke; a wrong
    /// key is still the error thrown, not an integrity failure.
    func testVerifyNamesForgedAndZeroedPagesBesideIntegrityErrors() throws {
        let directory = try TemporaryDirectory()
        let path = try BackupFixture.populatedFile(in: directory, rows: 300)
        let pageCount = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) / 4096
        XCTAssertGreaterThan(pageCount, 4, "the damage below must land inside the file")

        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(4096 + 100))  // page 2: one bit
        let byte = try XCTUnwrap(handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: UInt64(4096 + 100))
        handle.write(Data([byte ^ 0x01]))
        try handle.seek(toOffset: UInt64(4096 * (pageCount - 1)))  // the last page: zeros
        handle.write(Data(repeating: 0, count: 4096))
        try handle.close()

        let report = try Database.verify(path: path, configuration: BackupFixture.configuration())
        XCTAssertEqual(report.damagedPages, [2, pageCount])
        XCTAssertEqual(report.pageCount, pageCount)
        XCTAssertFalse(report.integrityErrors.isEmpty, "integrity_check reads page 2 and fails")

        var wrong = BackupFixture.configuration()
        wrong.encryption = .passphrase("not the passphrase")
        XCTAssertThrowsError(try Database.verify(path: path, configuration: wrong)) {
            XCTAssertEqual(($0 as? CofferError)?.code, .wrongPassphrase)
        }
    }
}

final class VerifyWALTests: XCTestCase {
    /// Committed frames still in the WAL are checked too; a torn tail past the last commit is not damage.
    /// (Each check runs on a fresh copy: integrity_check's connection, the last to close, checkpoints.)
    func testVerifyChecksCommittedWALFramesOnly() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        var configuration = BackupFixture.configuration()
        configuration.checkpointThreshold = 1_000_000
        configuration.idleCheckpointDelay = 3600
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 50)
        try database.checkpoint(.truncate)
        try database.write { db in try db.execute(sql: "UPDATE item SET n = 1 WHERE id = 1") }
        try database.write { db in try db.execute(sql: "UPDATE item SET n = 2 WHERE id = 2") }

        func verifyCopy(_ damage: (String) throws -> Void) throws -> VerificationReport {
            let copy = directory.path("copy-\(UUID().uuidString.prefix(6)).db")
            try FileManager.default.copyItem(atPath: path, toPath: copy)
            try FileManager.default.copyItem(atPath: path + "-wal", toPath: copy + "-wal")
            try damage(copy + "-wal")
            return try Database.verify(path: copy, configuration: configuration)
        }
        XCTAssertTrue(try verifyCopy { _ in }.isClean)

        // Garbage appended past the last commit: not part of the database.
        XCTAssertTrue(
            try verifyCopy { wal in
                let tail = try XCTUnwrap(FileHandle(forUpdatingAtPath: wal))
                try tail.seekToEnd()
                tail.write(Data(repeating: 0x5a, count: 4096 + 24))
                try tail.close()
            }.isClean)

        // The last commit's frame with a bad page but a recomputed-looking header cannot be forged here;
        // instead, damage the HMAC region of the first frame's page (bytes P−32…P−12 are covered by the
        // WAL checksum too), which ends the log at that frame: SQLite then sees neither commit, and the
        // database is still consistent — so verify must not report WAL damage.
        let report = try verifyCopy { wal in
            let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: wal))
            try handle.seek(toOffset: UInt64(32 + 24 + 4096 - 30))
            handle.write(Data([0xff, 0x00, 0xff]))
            try handle.close()
        }
        XCTAssertEqual(report.damagedWALPages, [])
        XCTAssertTrue(report.integrityErrors.isEmpty)
    }
}
