import Coffer
import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

/// The ```swift blocks of CofferRepair.md, compiled and run as written. The examples use paths relative
/// to the current directory, so each test runs inside a temporary one.
final class CofferRepairArticleTests: InTemporaryDirectoryTestCase {
    /// A database in Coffer's default format, as an app writes it: 500 notes.
    private func makeDatabase(at path: String) throws {
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("secret")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            for number in 1...500 {
                try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["note \(number)"])
            }
        }
        try database.close()
    }

    func testSalvagingAFileInCoffersDefaultFormat() throws {
        try makeDatabase(at: "broken.db")
        // SQLCipher 3's settings (the default) authenticate no page of it.
        XCTAssertThrowsError(try Salvager(path: "broken.db", key: .passphrase("secret"))) { error in
            XCTAssertEqual(error as? DatabaseFileError, .wrongKey)
            XCTAssertEqual("\(error)", "wrong key or cipher profile: no page authenticates at any page size")
        }

        let salvager = try Salvager(path: "broken.db", key: .passphrase("secret"), settings: .coffer)
        let writer = try RepairWriter(path: "recovered.db", encryption: .passphrase("secret"))
        var sink = writer
        let report = try salvager.run(into: &sink) { progress in
            print("\(progress.pagesScanned)/\(progress.pagesTotal) pages, \(progress.rowsSalvaged) rows")
        }
        try writer.close()
        print(report.rowsSalvaged, report.pagesBadHMAC, report.orphanLeavesAdopted)

        XCTAssertEqual(report.rowsSalvaged, 500)
        XCTAssertEqual(report.pagesBadHMAC, 0)
        XCTAssertEqual(report.profile, "coffer")
        let recovered = try Database(path: "recovered.db", configuration: Configuration(encryption: .passphrase("secret")))
        XCTAssertEqual(try recovered.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 500)
        try recovered.close()
    }

    func testInspectingPages() throws {
        try makeDatabase(at: "app.db")

        let file = try DatabaseFile(path: "app.db", key: .passphrase("secret"), settings: .coffer)
        for page in PageRoles.classify(file) { print(page.pageNumber, page.role, page.owner ?? "-") }

        let pages = PageRoles.classify(file)
        XCTAssertEqual(pages.count, Int(file.pageCount))
        XCTAssertTrue(pages.contains { $0.owner == "note" })
    }

    func testReadingThroughAPager() throws {
        try makeDatabase(at: "app.db")

        let pager = Pager(file: try DatabaseFile(path: "app.db", key: .passphrase("secret"), settings: .coffer))
        print(pager.pageCount, pager.wal?.index.committedFrames ?? 0)

        XCTAssertEqual(pager.pageCount, pager.file.pageCount, "a closed database leaves no WAL")
        XCTAssertNil(pager.wal)
        guard case .success(let page) = pager.page(1) else { return XCTFail("page 1 does not read") }
        XCTAssertEqual(page.count, pager.pageSize)
    }

    func testRepairingAsTheCommandLineDoes() throws {
        try makeDatabase(at: "broken.db")

        let input = try RepairJob.open(material: nil) { salt in
            try DatabaseFile(path: "broken.db", key: .passphrase("secret"), settings: .coffer, salt: salt)
        }
        let report = try RepairJob.salvage(
            Salvager(file: input.file), material: nil, to: "recovered.db", encryption: .passphrase("secret"),
            cipher: CipherOptions())
        print(report.rowsSalvaged, input.saltFromMaterial)

        XCTAssertEqual(report.rowsSalvaged, 500)
        XCTAssertFalse(input.saltFromMaterial)
        XCTAssertFalse(FileManager.default.fileExists(atPath: RepairJob.partialPath(for: "recovered.db")))
        let recovered = try Database(path: "recovered.db", configuration: Configuration(encryption: .passphrase("secret")))
        XCTAssertEqual(try recovered.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 500)
        try recovered.close()
        // The destination is never overwritten.
        XCTAssertThrowsError(
            try RepairJob.salvage(
                Salvager(file: input.file), material: nil, to: "recovered.db", encryption: .none, cipher: CipherOptions()))
    }

    func testDetectingTheProfileAndMigrating() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/sqlcipher/v4-4096.db")
        try FileManager.default.copyItem(atPath: fixture.path, toPath: "app-v4.db")
        let passphrase = "pw-v4-4096"  // the fixture's (Tests/Fixtures/sqlcipher/make_fixtures.py)

        let file = try ProfileDetection.open(path: "app-v4.db", key: .passphrase(passphrase))
        print(ProfileDetection.describe(file))  // sqlcipher4 (PBKDF2-HMAC-SHA512 256000 rounds, HMAC-SHA512, …)
        let result = try FileMigration.run(file: file, output: "app.db", encryption: .passphrase(passphrase))
        print(result.verified)  // row counts and content hashes match, table by table

        XCTAssertTrue(ProfileDetection.describe(file).hasPrefix("sqlcipher4 (PBKDF2-HMAC-SHA512 256000 rounds, HMAC-SHA512, "))
        XCTAssertTrue(result.verified)
        // The migrated file is in Coffer's default format: the `.coffer` profile reads it.
        XCTAssertEqual(try ProfileDetection.open(path: "app.db", key: .passphrase(passphrase)).settings.name, "coffer")
        XCTAssertNoThrow(try DatabaseFile(path: "app.db", key: .passphrase(passphrase), settings: .coffer))
    }
}
