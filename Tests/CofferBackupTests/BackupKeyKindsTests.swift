import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Backups of raw-keyed and plaintext databases, and the async entry point.
final class BackupKeyKindsTests: XCTestCase {
    private func roundTrip(_ configuration: Configuration) async throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: configuration)
        defer { try? database.close() }
        // A brand-new raw-keyed file may have page 1 (and its salt) only in the WAL: backup copes.
        let backups = directory.url.appendingPathComponent("backups")
        try BackupFixture.populate(database, rows: 300)
        let full = try await database.backup(to: backups)
        try await database.write { db in try db.execute(sql: "DELETE FROM item WHERE id % 3 = 0") }
        let increment = try await database.backup(to: backups)
        XCTAssertEqual([full.kind, increment.kind], [.full, .incremental])
        let expected = try BackupFixture.dump(database)
        let restored = directory.path("restored.db")
        try Database.restore(from: backups, to: restored, configuration: configuration)
        XCTAssertEqual(try BackupFixture.dump(path: restored, configuration: configuration), expected)
        XCTAssertTrue(try Database.verify(path: restored, configuration: configuration).isClean)
        _ = try RepairMaterial.load(directory: backups, encryption: configuration.encryption)
    }

    func testRawKeyDatabase() async throws {
        let key = Data((0..<32).map { UInt8($0 &* 7 &+ 3) })
        try await roundTrip(Configuration(encryption: .rawKey(key)))
    }

    func testDatabaseWithoutPageHMACs() async throws {
        try await roundTrip(
            Configuration(
                encryption: .passphrase("no hmac"), cipher: CipherOptions(keyDerivation: .pbkdf2SHA1(rounds: 2), usesHMAC: false))
        )
    }

    func testPlaintextDatabase() async throws {
        try await roundTrip(Configuration())
    }
}
