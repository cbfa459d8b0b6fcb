import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer
@testable import CofferEngine
@testable import CofferRecords

/// A row of the imported table, filled from encrypted sources' `t(id INTEGER PRIMARY KEY, name, big)`.
@Table("imported")
struct ImportedRow: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
    var big: String
}

/// Live migrations from encrypted files Coffer did not write: SQLCipher 1, 2 and 4 files written by SQLCipher
/// 4.12 (PyPI `sqlcipher3-binary`, the repair fixtures), SQLCipher 3 files written by the `sqlcipher` 3.4.1
/// shell at two page sizes and with a raw key, and another Coffer database. Each reads as the union on readers
/// and the writer before anything moved, moves every row exactly once, and leaves the source's bytes as
/// they were; a wrong key is refused before anything is written.
final class LiveMigrationEncryptedSourceTests: XCTestCase {
    private let key = Data((0..<32).map { UInt8(truncatingIfNeeded: $0 &* 11 &+ 5) })

    /// The repair fixtures' 60 rows: name = "name i", big = printf("x%03d", i) repeated 1500 times when
    /// i % 20 == 0 (overflow pages), else 5.
    private let fixtureRows: [ImportedRow] = (1...60).map { (i: Int64) in
        let unit = String(format: "x%03d", i)
        return ImportedRow(id: i, name: "name \(i)", big: String(repeating: unit, count: i % 20 == 0 ? 1500 : 5))
    }

    private func fixture(_ name: String, into directory: TemporaryDirectory) throws -> String {
        let original = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/repair/\(name)")
        let copy = directory.path(name)
        try FileManager.default.copyItem(at: original, to: URL(fileURLWithPath: copy))
        return copy
    }

    /// `fixtureRows`' SQL, for producers other than the fixtures'.
    private var fixtureInserts: String {
        "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, big TEXT);\n"
            + fixtureRows.map { "INSERT INTO t VALUES(\($0.id ?? 0), '\($0.name)', '\($0.big)');" }.joined(separator: "\n")
    }

    private func defaultPageSize(_ database: Database) throws -> String? {
        try database.read { try $0.fetchValue(String.self, sql: "PRAGMA cipher_default_page_size") }
    }

    /// Migrates `t` of `sourcePath` into a new encrypted database: the union reads every row before the
    /// worker moves one, then every row moved once; the source's bytes and SQLCipher's defaults unchanged.
    private func assertMigratesLive(
        _ sourcePath: String, encryption: Encryption, in directory: TemporaryDirectory, file: StaticString = #filePath,
        line: UInt = #line
    ) throws {
        let sourceBytes = try Data(contentsOf: URL(fileURLWithPath: sourcePath))
        let database = try Database(
            path: directory.path("app-\(UUID()).db"), configuration: Configuration(encryption: .rawKey(key)))
        let defaults = try defaultPageSize(database)
        var options = LiveMigrationOptions()
        options.batchSize = 7
        let migration = try database.migrateLive(
            ImportedRow.self, from: .table("t", inFile: sourcePath, encryption: encryption), options: options)
        migration.pause()
        XCTAssertEqual(migration.progress.totalRows, 60, file: file, line: line)
        // Readers attach the source when they first read, the writer when it declared the migration.
        let readerRows = try database.read { try ImportedRow.order { [$0.id.asc] }.fetchAll($0) }
        XCTAssertEqual(readerRows, fixtureRows, file: file, line: line)
        XCTAssertEqual(try database.write { try ImportedRow.all().fetchCount($0) }, 60, file: file, line: line)
        try database.write { db in
            var edited = try XCTUnwrap(ImportedRow.filter { $0.id == 40 }.fetchOne(db))
            edited.name = "edited"
            XCTAssertTrue(try edited.update(db))
        }
        try migration.finishNow()
        var expected = fixtureRows
        expected[39].name = "edited"
        try database.read { db in
            XCTAssertEqual(try ImportedRow.order { [$0.id.asc] }.fetchAll(db), expected, file: file, line: line)
            XCTAssertEqual(try db.fetchValue(Int.self, sql: "SELECT count(*) FROM main.imported"), 60, file: file, line: line)
        }
        XCTAssertEqual(migration.progress, LiveMigrationProgress(movedRows: 60, totalRows: 60, isFinished: true))
        XCTAssertEqual(try defaultPageSize(database), defaults, "SQLCipher's defaults put back", file: file, line: line)
        try database.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: sourcePath)), sourceBytes, file: file, line: line)
    }

    func testSQLCipher1And2FilesMigrateLive() throws {
        let directory = try TemporaryDirectory()
        try assertMigratesLive(
            fixture("sqlcipher1.db", into: directory), encryption: .passphrase("pw1"), in: directory)
        try assertMigratesLive(
            fixture("sqlcipher2.db", into: directory), encryption: .passphrase("pw2"), in: directory)
    }

    func testSQLCipher4FileMigratesLiveOnSQLCipher4AndIsRefusedClearlyOn3() throws {
        let directory = try TemporaryDirectory()
        let path = try fixture("sqlcipher4.db", into: directory)
        guard TestedSQLCipher.isVersion4 else {
            let database = try Database(path: directory.path("app.db"), configuration: Configuration(encryption: .rawKey(key)))
            XCTAssertThrowsError(
                try database.migrateLive(ImportedRow.self, from: .table("t", inFile: path, encryption: .passphrase("pw4")))
            ) { error in
                XCTAssertEqual((error as? CofferError)?.code, .notADatabase)
                XCTAssertTrue("\(error)".contains("coffer migrate"), "\(error)")
            }
            XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master") }, 0)
            return
        }
        try assertMigratesLive(path, encryption: .passphrase("pw4"), in: directory)
    }

    func testShellWrittenSQLCipher3FilesMigrateLive() throws {
        let directory = try TemporaryDirectory()
        for pageSize in [1024, 4096] {
            let path = directory.path("shell-\(pageSize).db")
            try Shell.sqlcipher(path, key: "shell pw", pageSize: pageSize, fixtureInserts)
            try assertMigratesLive(path, encryption: .passphrase("shell pw"), in: directory)
        }
        // A raw key, and the shell's own defaults (1024-byte pages).
        let rawKey = Data((0..<32).map { UInt8(255 - $0) })
        let hex = rawKey.map { String(format: "%02x", $0) }.joined()
        let path = directory.path("shell-raw.db")
        try Shell.run("sqlcipher", path, "PRAGMA key = \"x'\(hex)'\";\n" + fixtureInserts)
        try assertMigratesLive(path, encryption: .rawKey(rawKey), in: directory)
    }

    func testAnotherCofferDatabaseMigratesLive() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("other.db")
        do {
            let other = try Database(path: path, configuration: Configuration(encryption: .passphrase("other secret")))
            try other.write { db in try db.executeScript(fixtureInserts) }
            try other.close()
        }
        try assertMigratesLive(path, encryption: .passphrase("other secret"), in: directory)
    }

    func testAWrongKeyOrAMissingKeyIsRefusedBeforeAnythingIsWritten() throws {
        let directory = try TemporaryDirectory()
        let encrypted = try fixture("sqlcipher2.db", into: directory)
        let plain = directory.path("plain.sqlite")
        try Shell.run("sqlite3", plain, fixtureInserts)
        let database = try Database(path: directory.path("app.db"), configuration: Configuration(encryption: .rawKey(key)))
        let cases: [(LiveMigrationSource, ResultCode)] = [
            (.table("t", inFile: encrypted, encryption: .passphrase("not pw2")), .wrongPassphrase),
            (.table("t", inFile: encrypted), .notADatabase),
            (.table("t", inFile: plain, encryption: .passphrase("pw")), .notADatabase),
        ]
        for (source, code) in cases {
            XCTAssertThrowsError(try database.migrateLive(ImportedRow.self, from: source)) { error in
                XCTAssertEqual((error as? CofferError)?.code, code, "\(error)")
            }
        }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master") }, 0)
        // The right key still works after the refusals.
        try database.migrateLive(ImportedRow.self, from: .table("t", inFile: encrypted, encryption: .passphrase("pw2")))
            .finishNow()
        XCTAssertEqual(try database.read { try ImportedRow.all().fetchCount($0) }, 60)
        try database.close()
    }

    func testReopenResumesFromAnEncryptedSource() throws {
        let directory = try TemporaryDirectory()
        let source = try fixture("sqlcipher1.db", into: directory)
        let path = directory.path("app.db")
        var options = LiveMigrationOptions()
        options.batchSize = 5
        do {
            let database = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
            let migration = try database.migrateLive(
                ImportedRow.self, from: .table("t", inFile: source, encryption: .passphrase("pw1")), options: options)
            migration.pause()
            try database.write { db in XCTAssertTrue(try ImportedRow.filter { $0.id == 59 }.deleteAll(db) == 1) }
            try database.close()
        }
        let database = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
        let migration = try database.migrateLive(
            ImportedRow.self, from: .table("t", inFile: source, encryption: .passphrase("pw1")), options: options)
        try migration.finishNow()
        try database.read { db in
            XCTAssertEqual(try ImportedRow.order { [$0.id.asc] }.fetchAll(db), fixtureRows.filter { $0.id != 59 })
        }
        try database.close()
        // Done: declaring it again at the next launch needs neither the key's derivation nor the file.
        try FileManager.default.removeItem(atPath: source)
        let reopened = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
        XCTAssertTrue(
            try reopened.migrateLive(ImportedRow.self, from: .table("t", inFile: source, encryption: .passphrase("pw1")))
                .progress.isFinished)
        try reopened.close()
    }

    /// SQLCipher reads an attached file with its process-wide defaults, which an attachment sets to the
    /// file's format for a moment: a Coffer connection keyed in that moment must not depend on them.
    func testCofferConnectionsOpenWhileTheDefaultsAreASourcesFormat() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("app.db")
        do {
            let database = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
            try database.write { try $0.executeScript("CREATE TABLE x(v); INSERT INTO x VALUES (1)") }
            try database.close()
        }
        let probe = try Database(path: directory.path("probe.db"), configuration: Configuration(encryption: .none))
        try probe.writeWithoutTransaction { connection in
            try CipherDefaults.with(format: .sqlcipher3, pageSize: 1024, usesHMAC: false, on: connection) {
                let database = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
                XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT v FROM x") }, 1)
                try database.write { try $0.execute(sql: "INSERT INTO x VALUES (2)") }
                try database.close()
            }
        }
        try probe.close()
        let database = try Database(path: path, configuration: Configuration(encryption: .rawKey(key)))
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT sum(v) FROM x") }, 3)
        try database.close()
    }
}
