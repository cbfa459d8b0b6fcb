import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class RepairMaterialTests: XCTestCase {
    func testMaterialDescribesTheBackupAndOpensWithoutTheDatabaseSalt() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        let database = try Database(path: path, configuration: BackupFixture.configuration())
        try BackupFixture.populate(database, rows: 3000)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        try database.close()

        // Destroy the database's salt: the material still opens (its own salt is beside it).
        let salt = try XCTUnwrap(FileHandle(forReadingAtPath: path)?.read(upToCount: 16))
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        handle.write(Data(repeating: 0, count: 16))
        try handle.close()

        let material = try RepairMaterial.load(directory: backups, encryption: .passphrase(BackupFixture.passphrase))
        XCTAssertEqual(material.databaseSalt, salt)
        XCTAssertEqual(material.pageSize, 4096)
        XCTAssertEqual(material.reservedBytes, 48)
        XCTAssertTrue(material.unreadablePages.isEmpty)
        let item = try XCTUnwrap(material.trees.first { $0.name == "item" })
        XCTAssertGreaterThan(item.leafPages.count, 100)
        XCTAssertEqual(Set(item.leafPages.map(\.pageNumber)).count, item.leafPages.count)
        XCTAssertNotNil(material.schema.first { $0.name == "item_n" && $0.kind == .index && $0.rootPage > 1 })
        // Every page of the database belongs to exactly one tree (no freelist in a fresh file).
        let pages = material.trees.flatMap { $0.leafPages.map(\.pageNumber) + $0.interiorPages }
        XCTAssertEqual(Set(pages).count, pages.count)
        XCTAssertEqual(pages.count, material.pageCount)

        XCTAssertThrowsError(try RepairMaterial.load(directory: backups, encryption: .passphrase("wrong"))) {
            XCTAssertEqual(($0 as? CofferError)?.code, .wrongPassphrase)
        }
    }

    func testSchemaChangeRefreshesTheMaterialAndAOneSlotLossLeavesTheOther() throws {
        let directory = try TemporaryDirectory()
        let database = try Database(path: directory.path("app.db"), configuration: BackupFixture.configuration())
        defer { try? database.close() }
        try BackupFixture.populate(database, rows: 50)
        let backups = directory.url.appendingPathComponent("backups")
        try database.backup(to: backups)
        try database.write { db in try db.execute(sql: "CREATE TABLE extra(a TEXT)") }
        let increment = try database.backup(to: backups)
        XCTAssertEqual(increment.kind, .incremental)
        let material = try RepairMaterial.load(directory: backups, encryption: .passphrase(BackupFixture.passphrase))
        XCTAssertEqual(material.generationID, increment.id)
        XCTAssertNotNil(material.trees.first { $0.name == "extra" })

        // Truncate the newest copy: the older one is loaded.
        let newest = ["repair-material.0", "repair-material.1"].map { backups.appendingPathComponent($0) }
            .max {
                (try? $0.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate ?? .distantPast)
                    ?? .distantPast
                    < (try? $1.resourceValues(forKeys: [.contentModificationDateKey]).contentModificationDate ?? .distantPast)
                    ?? .distantPast
            }
        let newestPath = try XCTUnwrap(newest).path
        try Data("CFRM".utf8).write(to: URL(fileURLWithPath: newestPath))
        let older = try RepairMaterial.load(directory: backups, encryption: .passphrase(BackupFixture.passphrase))
        XCTAssertEqual(older.generationID, 1)
    }
}
