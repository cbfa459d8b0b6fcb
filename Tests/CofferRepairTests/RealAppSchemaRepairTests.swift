import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Undamaged databases of realistic apps (Tools/corpus/make_app_databases.py: chat with FTS4 external
/// content and CJK, maps with R*Trees, an app that migrated for years, hostile identifiers), written by the
/// `sqlite3` and `sqlcipher` shells and SQLCipher 4.12, come back from `repair` and from `migrate` with every
/// row, every virtual table answering the same queries, both integrity checks ok, AUTOINCREMENT
/// continuing, user_version and application_id kept.
final class RealAppSchemaRepairTests: XCTestCase {
    private static var generator: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Tools/corpus/make_app_databases.py")
    }

    func testRealAppSchemasComeBackWorkingFromRepairAndMigrate() throws {
        let canGenerate = (try? Shell.run("/usr/bin/env", ["python3", "-c", "import sqlcipher3"]).status) == 0
        try XCTSkipUnless(canGenerate, "python sqlcipher3 (SQLCipher 4.12) is missing: python3 -m pip install sqlcipher3-binary")
        let dir = try TemporaryDirectory("coffer-apps")
        // Every app × every writer; 1024-byte pages with a WAL and 4096-byte pages without.
        for (pages, wal) in [("1024", "yes"), ("4096", "no")] {
            let made = try Shell.run(
                "/usr/bin/env",
                ["python3", Self.generator.path, dir.path("corpus"), "--seed", "17", "--page-sizes", pages, "--wal", wal])
            XCTAssertEqual(made.status, 0, made.stderr)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path("corpus"))
            .filter { $0.hasSuffix(".json") && $0 != "manifest.json" }.sorted()
        XCTAssertEqual(names.count, 24)
        for name in names {
            let truth = try GeneratorTruth.load(dir.path("corpus/\(name)"))
            let key: Encryption = truth.passphrase.map { .passphrase($0) } ?? .none
            let encryption: Encryption = truth.passphrase.map { .passphrase($0) } ?? .none
            let file =
                key.isEncrypted
                ? try ProfileDetection.open(path: truth.path, key: key)
                : try DatabaseFile(path: truth.path, key: .none, settings: .plaintext)
            XCTAssertEqual(file.settings.name, truth.profile, truth.name)

            let repaired = dir.path("\(truth.name).repaired.db")
            var writer = try RepairWriter(path: repaired, encryption: encryption)
            var report = try Salvager(file: file).run(into: &writer, pipeline: SalvagePipeline())
            writer.annotate(&report)
            try writer.close()
            XCTAssertEqual(report.schemaIssues, [], truth.name)
            XCTAssertEqual(report.rowsDropped, 0, truth.name)
            try assertMatches(truth, output: repaired, encryption: encryption, what: "repair")

            let migrated = dir.path("\(truth.name).migrated.db")
            let result = try FileMigration.run(file: file, output: migrated, encryption: encryption)
            XCTAssertTrue(result.verified, "\(truth.name): \(result.checks.filter { !$0.matches }) \(result.objects)")
            XCTAssertEqual(result.objects.filter { $0.verdict != .copied }, [], truth.name)
            try assertMatches(truth, output: migrated, encryption: encryption, what: "migrate")
        }
    }

    private func assertMatches(_ truth: GeneratorTruth, output: String, encryption: Encryption, what: String) throws {
        let label = "\(truth.name) (\(what))"
        let database = try Database(path: output, configuration: Configuration(encryption: encryption))
        defer { try? database.close() }
        try database.write { connection in
            for (table, expected) in truth.tables {
                let withoutRowid = expected.rows.first?.first.map { Self.value($0) == .null } ?? false
                let columns = expected.columns.map(SQLIdentifier.quote).joined(separator: ", ")
                let sql = "SELECT \(withoutRowid ? "NULL" : "_rowid_"), \(columns) FROM \(SQLIdentifier.quote(table))"
                let actual = try Self.rows(sql, connection: connection).map(Self.key).sorted()
                XCTAssertEqual(actual, expected.rows.map { $0.map(Self.value) }.map(Self.key).sorted(), "\(label): \(table)")
            }
            for query in truth.queries {
                let actual = try Self.rows(query.sql, connection: connection)
                XCTAssertEqual(actual, query.rows.map { $0.map(Self.value) }, "\(label): \(query.sql)")
            }
            for (name, module) in truth.virtualTables {
                let sql = try connection.fetchValue(
                    String.self, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [name])
                XCTAssertEqual(
                    sql.map { $0.uppercased().hasPrefix("CREATE VIRTUAL TABLE") && $0.lowercased().contains(module) }, true,
                    "\(label): \(name) is a \(module) virtual table")
            }
            for name in truth.fts4 {
                let quoted = SQLIdentifier.quote(name)
                XCTAssertNoThrow(
                    try connection.execute(sql: "INSERT INTO \(quoted)(\(quoted)) VALUES('integrity-check')"), "\(label): \(name)"
                )
            }
            XCTAssertEqual(try connection.fetchValue(String.self, sql: "PRAGMA integrity_check"), "ok", label)
            for (table, seq) in truth.sequences {
                XCTAssertEqual(
                    try connection.fetchValue(
                        Int64.self, sql: "SELECT seq FROM sqlite_sequence WHERE name = ?", arguments: [table]),
                    seq, "\(label): \(table)")
                let next = try connection.fetchValue(
                    Int64.self,
                    sql:
                        "SELECT max((SELECT seq FROM sqlite_sequence WHERE name = ?), coalesce(max(_rowid_), 0)) + 1 FROM \(SQLIdentifier.quote(table))",
                    arguments: [table])
                XCTAssertEqual(next, truth.nextIds[table], "\(label): next id of \(table)")
            }
            XCTAssertEqual(try connection.fetchValue(Int.self, sql: "PRAGMA user_version"), truth.userVersion, label)
            XCTAssertEqual(try connection.fetchValue(Int.self, sql: "PRAGMA application_id"), truth.applicationId, label)
        }
    }

    private static func rows(_ sql: String, connection: Connection) throws -> [[DatabaseValue]] {
        var rows: [[DatabaseValue]] = []
        try connection.forEachRow(sql: sql) { statement in
            rows.append((0..<statement.columnCount).map { statement.value(at: $0) })
        }
        return rows
    }

    /// The database value a generator value stands for.
    private static func value(_ value: GeneratorValue) -> DatabaseValue {
        switch value {
        case .null: return .null
        case .integer(let number): return .integer(number)
        case .real(let number): return .real(number)
        case .text(let text): return .text(text)
        case .blob(let bytes): return .blob(Data(bytes))
        }
    }

    /// A row as one comparable string (rows of a table are compared as sorted multisets).
    private static func key(_ row: [DatabaseValue]) -> String {
        row.map { value in
            switch value {
            case .null: return "n"
            case .integer(let number): return "i\(number)"
            case .real(let number): return "r\(number.bitPattern)"
            case .text(let text): return "t" + text.debugDescription
            case .blob(let data): return "b" + data.map { String(format: "%02x", $0) }.joined()
            }
        }.joined(separator: "|")
    }
}
