import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Files written by the real SQLCipher 4.12 producer in each generation's format (see
/// Tests/Fixtures/sqlcipher/make_fixtures.py) read through Coffer's page decoder: detection, every page
/// size, raw keys, custom settings and WAL files.
final class SQLCipherGenerationTests: XCTestCase {
    private func salvageAll(_ file: DatabaseFile, useWAL: Bool = false) throws -> (CollectingSink, RepairReport) {
        var sink = CollectingSink()
        let report = try Salvager(file: file, useWAL: useWAL).run(into: &sink)
        return (sink, report)
    }

    func testEveryGenerationAndPageSizeIsDetectedAndReadWhole() throws {
        let cases: [(String, String, Int)] = [
            ("v1-1024.db", "sqlcipher1", 1024), ("v2-1024.db", "sqlcipher2", 1024), ("v3-1024.db", "sqlcipher3", 1024),
            ("v4-1024.db", "sqlcipher4", 1024), ("v4-2048.db", "sqlcipher4", 2048), ("v4-4096.db", "sqlcipher4", 4096),
            ("v4-8192.db", "sqlcipher4", 8192), ("v4-16384.db", "sqlcipher4", 16384),
        ]
        for (name, profile, pageSize) in cases {
            let file = try ProfileDetection.open(
                path: SQLCipherFixtures.path(name), key: .passphrase(SQLCipherFixtures.passphrase(name)))
            XCTAssertEqual(file.settings.name, profile, name)
            XCTAssertEqual(file.pageSize, pageSize, name)
            XCTAssertFalse(file.pageOneDamaged, name)
            let (sink, report) = try salvageAll(file)
            let count = name == "v4-4096.db" ? 1200 : 200
            XCTAssertEqual(sink.rowSet("msgs"), SQLCipherFixtures.msgs(1...count), name)
            XCTAssertEqual(sink.rowSet("kv"), SQLCipherFixtures.kv, name)
            XCTAssertEqual(report.rowsDropped, 0, name)
            XCTAssertEqual(report.pagesBadHMAC, 0, name)
            XCTAssertEqual(report.profile, profile, name)
        }
    }

    func testExplicitProfileSkipsDetectionAndOtherProfilesRefuse() throws {
        let path = SQLCipherFixtures.path("v4-16384.db")
        let file = try DatabaseFile(path: path, key: .passphrase("pw-v4-16384"), settings: .sqlcipher4.with(pageSize: nil))
        XCTAssertEqual(file.pageSize, 16384)
        for other in [CipherSettings.sqlcipher3, .sqlcipher2.with(pageSize: nil)] {
            XCTAssertThrowsError(try DatabaseFile(path: path, key: .passphrase("pw-v4-16384"), settings: other)) {
                XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
            }
        }
    }

    func testRawKeyFileIsDetectedWithoutKeyDerivation() throws {
        let file = try ProfileDetection.open(
            path: SQLCipherFixtures.path("v4-rawkey.db"), key: .rawKey(Data(SQLCipherFixtures.rawKey)))
        XCTAssertEqual(file.settings.name, "sqlcipher4")
        XCTAssertEqual(try salvageAll(file).0.rowSet("msgs"), SQLCipherFixtures.msgs(1...200))
        var wrong = SQLCipherFixtures.rawKey
        wrong[0] ^= 1
        XCTAssertThrowsError(try ProfileDetection.open(path: SQLCipherFixtures.path("v4-rawkey.db"), key: .rawKey(Data(wrong)))) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey)
        }
    }

    func testCustomSettingsOpenOnlyWhenSpelledOut() throws {
        let path = SQLCipherFixtures.path("custom.db")
        XCTAssertThrowsError(try ProfileDetection.open(path: path, key: .passphrase("pw-custom"))) {
            XCTAssertEqual($0 as? DatabaseFileError, .wrongKey, "no generation's defaults fit")
        }
        let custom = CipherSettings(
            name: "custom", isEncrypted: true, kdfAlgorithm: .sha512, kdfRounds: 12345, hmacAlgorithm: .sha1,
            pageSize: nil, reserveBytes: CipherSettings.defaultReserve(for: .sha1))
        let file = try ProfileDetection.open(path: path, key: .passphrase("pw-custom"), candidates: [custom])
        XCTAssertEqual(file.pageSize, 2048)
        XCTAssertEqual(try salvageAll(file).0.rowSet("msgs"), SQLCipherFixtures.msgs(1...200))
    }

    func testWrongPassphraseIsNamedAsSuchForEveryGeneration() {
        for name in ["v1-1024.db", "v2-1024.db", "v3-1024.db", "v4-4096.db"] {
            XCTAssertThrowsError(try ProfileDetection.open(path: SQLCipherFixtures.path(name), key: .passphrase("wrong"))) {
                XCTAssertEqual($0 as? DatabaseFileError, .wrongKey, name)
            }
        }
    }

    func testDamagedPageOneStillDetectsTheProfileFromAnotherPage() throws {
        let dir = try TemporaryDirectory()
        let path = try SQLCipherFixtures.copy("v4-4096.db", to: dir)
        try Damage.flip(path, page: 1, pageSize: 4096, offsetInPage: 200)
        let file = try ProfileDetection.open(path: path, key: .passphrase("pw-v4-4096"))
        XCTAssertEqual(file.settings.name, "sqlcipher4")
        XCTAssertEqual(file.pageSize, 4096)
        XCTAssertTrue(file.pageOneDamaged)
    }

    func testWALCommittedFramesAreReadAndUncommittedOnesIgnored() throws {
        let path = SQLCipherFixtures.path("v4-wal.db")
        let index = try XCTUnwrap(WALIndex(path: path + "-wal", pageSize: 4096))
        XCTAssertGreaterThan(index.committedFrames, 0)
        // Frames after the last commit: an open transaction's spilled pages (SQLite leaves their checksums
        // stale until commit, so no reader may use them).
        let walSize = try XCTUnwrap(FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int)
        XCTAssertGreaterThan((walSize - 32) / (24 + 4096), index.committedFrames, "the fixture must hold uncommitted frames")
        let file = try ProfileDetection.open(path: path, key: .passphrase("pw-v4-wal"))
        XCTAssertEqual(file.settings.name, "sqlcipher4")
        let (sink, report) = try salvageAll(file, useWAL: true)
        var expected = SQLCipherFixtures.msgs(1...300)
        var edited = SQLCipherFixtures.msgsRow(1)
        expected.remove(edited)
        edited[3] = .text(Array("edited in wal".utf8))
        expected.insert(edited)
        XCTAssertEqual(sink.rowSet("msgs"), expected)
        XCTAssertGreaterThan(report.walFramesUsed, 0)
        // Without the WAL, the checkpointed main file alone: rows 1…200 as first written.
        XCTAssertEqual(try salvageAll(file, useWAL: false).0.rowSet("msgs"), SQLCipherFixtures.msgs(1...200))
    }
}
