import Coffer
import CofferRepair
import CofferTestSupport
import XCTest

@Table("note") private struct SearchableNote: Codable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
}

extension SearchableNote: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<SearchableNote>(columns.body)
}

/// An app's search (the `coffer` tokenizer's FTS4 index and its triggers) still works after backup and
/// restore, `repair` and `migrate`: old rows are found, and a row written afterwards is indexed.
final class FullTextSurvivalTests: XCTestCase {
    private let configuration = Configuration(encryption: .passphrase("pw"))

    private func makeDatabase(_ path: String) throws -> Database {
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            _ = try db.upgradeSchema(for: [SearchableNote.self])
            for number in 0..<200 {
                var note = SearchableNote(id: nil, body: "第\(number)条笔记 note number \(number) 关于数据库")
                try note.insert(db)
            }
        }
        return database
    }

    private func assertSearchWorks(_ path: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        let found = try database.read { try SearchableNote.matching(.term("数据")).fetchCount($0) }
        XCTAssertEqual(found, 200, file: file, line: line)
        let one = try database.read { try SearchableNote.matching(.phrase("note number 42")).fetchAll($0).map(\.id) }
        XCTAssertEqual(one, [43], file: file, line: line)
        try database.write { db in
            var note = SearchableNote(id: nil, body: "新的笔记 written after")
            try note.insert(db)
        }
        let fresh = try database.read { try SearchableNote.matching(.term("新的")).fetchCount($0) }
        XCTAssertEqual(fresh, 1, "the triggers came along", file: file, line: line)
        try database.write { try SearchableNote.fullTextIndex.checkIntegrity($0) }
    }

    func testSearchWorksAfterBackupAndRestore() throws {
        let dir = try TemporaryDirectory()
        let database = try makeDatabase(dir.path("app.db"))
        _ = try database.backup(to: dir.url.appendingPathComponent("backups"))
        try database.close()
        try Database.restore(
            from: dir.url.appendingPathComponent("backups"), to: dir.path("restored.db"), configuration: configuration)
        try assertSearchWorks(dir.path("restored.db"))
    }

    func testSearchWorksAfterRepair() throws {
        let dir = try TemporaryDirectory()
        let database = try makeDatabase(dir.path("app.db"))
        _ = try database.repair(to: dir.path("repaired.db"))
        try database.close()
        try assertSearchWorks(dir.path("repaired.db"))
    }

    func testSearchWorksAfterMigrate() throws {
        let dir = try TemporaryDirectory()
        let database = try makeDatabase(dir.path("app.db"))
        try database.close()
        let file = try ProfileDetection.open(path: dir.path("app.db"), key: .passphrase("pw"))
        _ = try FileMigration.run(file: file, output: dir.path("migrated.db"), encryption: .passphrase("pw"))
        try assertSearchWorks(dir.path("migrated.db"))
    }

    func testTheIndexHoldsNoPlaintextOnDisk() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.db")
        let database = try makeDatabase(path)
        try database.write { db in
            var note = SearchableNote(id: nil, body: "zebracorn 斑马独角兽")
            try note.insert(db)
            try SearchableNote.fullTextIndex.optimize(db)
        }
        // Indexed terms and the tokenizer's pairs, in the main file and the WAL, open and closed.
        let markers = ["zebracorn", "斑马", "马独", "独角兽", "数据", "笔记", "number"]
        for suffix in ["", "-wal"] {
            for marker in markers { XCTAssertFalse(FileScan.file(path + suffix, contains: marker), "\(marker) in \(suffix)") }
        }
        try database.close()
        for marker in markers { XCTAssertFalse(FileScan.file(path, contains: marker), marker) }
        XCTAssertGreaterThan(FileScan.size(path), 0)
    }
}
