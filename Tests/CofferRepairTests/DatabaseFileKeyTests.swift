import CofferTestSupport
import XCTest

@testable import CofferRepair

final class DatabaseFileKeyTests: XCTestCase {
    private func makeFile(_ dir: TemporaryDirectory, pageSize: Int = 4096) throws -> String {
        let path = dir.path("k.db")
        try Shell.sqlcipher(
            path, pageSize: pageSize,
            """
            CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 400)
            INSERT INTO t(b) SELECT printf('row %d %s', i, hex(randomblob(40))) FROM n;
            """)
        return path
    }

    func testWrongKeyIsReportedAsWrongKey() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        XCTAssertThrowsError(try DatabaseFile(path: path, key: .passphrase("nope"))) { error in
            XCTAssertEqual(error as? DatabaseFileError, .wrongKey)
        }
    }

    func testDestroyedPageOneIsNotMistakenForWrongKey() throws {
        for pageSize in [4096, 1024] {
            let dir = try TemporaryDirectory()
            let path = try makeFile(dir, pageSize: pageSize)
            // Damage page 1's ciphertext (not its salt): its HMAC fails at every size.
            try Damage.flip(path, page: 1, pageSize: pageSize, offsetInPage: 200, count: 64)
            let file = try DatabaseFile(path: path, key: .passphrase("pw"))
            XCTAssertTrue(file.pageOneDamaged)
            XCTAssertEqual(file.pageSize, pageSize)
            XCTAssertEqual(file.page(1).isSuccess, false)
            XCTAssertTrue([0x05, 0x0d].contains(try file.page(2).get().first ?? 0))
        }
    }

    func testZeroedSaltIsReportedDistinctly() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        try Damage.overwrite(path, at: 0, with: [UInt8](repeating: 0, count: 16))
        XCTAssertThrowsError(try DatabaseFile(path: path, key: .passphrase("pw"))) { error in
            XCTAssertEqual(error as? DatabaseFileError, .saltDamagedOrWrongKey)
        }
    }

    func testSaltKeptElsewhereRescuesAFileWhoseSaltIsDestroyed() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        let truth = Set(try GroundTruth.rows(path, key: "pw", table: "t"))
        let salt = try DatabaseFile(path: path, key: .passphrase("pw")).salt
        try Damage.overwrite(path, at: 0, with: [UInt8](repeating: 0, count: 16))
        let salvager = try Salvager(path: path, key: .passphrase("pw"), salt: salt)
        var sink = CollectingSink()
        let report = try salvager.run(into: &sink)
        XCTAssertFalse(salvager.file.pageOneDamaged, "page 1's HMAC covers bytes 16…, not the salt")
        XCTAssertEqual(sink.rowSet("t"), truth)
        XCTAssertEqual(report.pagesBadHMAC, 0)
    }

    func testRawKeyOpensTheFile() throws {
        let dir = try TemporaryDirectory()
        let path = try makeFile(dir)
        let passphraseFile = try DatabaseFile(path: path, key: .passphrase("pw"))
        let raw = try XCTUnwrap(passphraseFile.decoder.keys?.encryptionKey.withUnsafeBytes { Data($0) })
        let file = try DatabaseFile(path: path, key: .rawKey(raw))
        XCTAssertFalse(file.pageOneDamaged)
        XCTAssertEqual(file.pageCount, passphraseFile.pageCount)
    }

    func testPlaintextFileNeedsNoKey() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("plain.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=1024; CREATE TABLE t(a); INSERT INTO t VALUES(1);")
        let file = try DatabaseFile(path: path, key: .none)
        XCTAssertEqual(file.pageSize, 1024)
        XCTAssertEqual(file.usableSize, 1024)
    }
}
