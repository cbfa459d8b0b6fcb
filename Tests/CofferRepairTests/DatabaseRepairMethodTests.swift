import Coffer
import CofferRepair
import Foundation
import XCTest

final class DatabaseRepairMethodTests: XCTestCase {
    func testOpenDatabaseRepairsItsOwnFileUnderTheSameKey() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-repair-method-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.db").path
        let output = directory.appendingPathComponent("recovered.db").path
        let configuration = Configuration(encryption: .passphrase("pw"))
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)")
            for i in 0..<500 { try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["note \(i)"]) }
        }
        // Rows still only in the WAL are salvaged too.
        let report = try database.repair(to: output)
        XCTAssertEqual(report.rowsSalvaged, 500)
        XCTAssertThrowsError(try database.repair(to: output), "never overwrites")
        try database.close()

        let recovered = try Database(path: output, configuration: configuration)
        XCTAssertEqual(try recovered.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 500)
        XCTAssertEqual(
            try recovered.read { try $0.fetchValue(String.self, sql: "SELECT text FROM note WHERE id = 500") }, "note 499")
    }

    /// The backup's repair material reaches `Database.repair(to:backup:)` too (it was the CLI's alone): with
    /// sqlite_master destroyed, the tables keep their names and every row.
    func testRepairUsesTheBackupsRepairMaterial() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-repair-method-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("app.db").path
        let backups = directory.appendingPathComponent("backups")
        let configuration = Configuration(encryption: .passphrase("pw"))
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT)")
            for i in 0..<2000 { try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["note \(i)"]) }
        }
        _ = try database.backup(to: backups)
        try database.checkpoint(.truncate)
        // Destroy page 1 (the schema) after its salt: the file's own structure no longer names the table.
        let handle = try XCTUnwrap(FileHandle(forWritingAtPath: path))
        try handle.seek(toOffset: 16)
        handle.write(Data(count: 4096 - 16))
        try handle.close()

        let without = try database.repair(to: directory.appendingPathComponent("without.db").path)
        XCTAssertNil(without.tables["note"], "without material the table's name is lost")
        let output = directory.appendingPathComponent("recovered.db").path
        let report = try database.repair(to: output, backup: backups)
        XCTAssertTrue(report.schemaFromMaterial)
        XCTAssertEqual(report.tables["note"], 2000)
        try database.close()
        let recovered = try Database(path: output, configuration: configuration)
        XCTAssertEqual(try recovered.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 2000)
        try recovered.close()
    }
}
