// FileMigration — a full logical copy of an undamaged database (any SQLCipher generation, or plaintext)
// into Coffer's own format, checked table by table.
//
// The copy runs the salvage engine (the page decoder reads the input, whatever wrote it) into the repair
// writer (schema, every row, indexes rebuilt, views, triggers, user_version and application_id kept).
// Migration is for intact files: if the salvage meets any damage (a bad page, a dropped cell, an orphan
// leaf, a broken overflow chain) the migration fails and says to use `repair` instead.
//
// The check: while rows stream from input to output, each table's rows are hashed as decoded from the
// input; the output is then reopened through Coffer and every table read back and hashed the same way.
// Row counts and hashes must match. The hash is order-independent (rows may come back in another order):
// each row is hashed alone with SHA-256 over a canonical encoding (rowid, then each value as a type tag
// and its bytes), and the table hash is the wrapping sum of the row digests taken as four 64-bit words.
// Every other object — virtual tables, indexes, views, triggers, sqlite_sequence — is checked in OUTPUT's
// schema (``MigrationObjectChecks``); a table OUTPUT lacks is a failed check, not a failed migration.

import Coffer
import Foundation

/// The per-table check of a migration.
public struct MigrationTableCheck: Sendable, Codable, Equatable {
    /// The table.
    public var table: String
    /// Rows decoded from the input.
    public var rowsIn: Int
    /// Rows read back from the output.
    public var rowsOut: Int
    /// Hash of the input rows (hex).
    public var hashIn: String
    /// Hash of the output rows (hex).
    public var hashOut: String
    /// Whether counts and hashes match.
    public var matches: Bool { rowsIn == rowsOut && hashIn == hashOut }
}

/// What a migration did.
public struct MigrationResult: Sendable, Codable, Equatable {
    /// The input's profile ("sqlcipher4", "plaintext", …).
    public var inputProfile: String
    /// The salvage report of the copy.
    public var report: RepairReport
    /// One check per table.
    public var checks: [MigrationTableCheck]
    /// Schema objects the output refused.
    public var objectsFailed: [String]
    /// One check per other schema object (virtual tables, indexes, views, triggers, sqlite_sequence).
    public var objects: [MigrationObjectCheck] = []
    /// Whether every table matched, every object was copied (or, for a virtual table whose module is
    /// missing, kept as tables) and nothing was refused.
    public var verified: Bool {
        checks.allSatisfy(\.matches) && objectsFailed.isEmpty && !objects.contains { $0.verdict == .missing }
    }
}

/// Why a migration stopped before its check.
public enum MigrationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is damaged: the copy would not be complete.
    case inputDamaged(String)
    /// SQLite refuses a table's CREATE TABLE (an unknown collation, say): its rows cannot be copied as
    /// that table.
    case tableRefused(SchemaIssue)

    /// A one-line explanation.
    public var description: String {
        switch self {
        case .inputDamaged(let detail): return "the input is damaged (\(detail)): use `coffer repair` instead"
        case .tableRefused(let issue):
            return "\(issue): use `coffer repair`, which keeps that table's rows in a recovered table"
        }
    }
}

/// Copies an intact database into Coffer's format and checks the copy.
///
/// ```swift
/// let file = try ProfileDetection.open(path: "v4.db", key: .passphrase("secret"))
/// let result = try FileMigration.run(file: file, output: "coffer.db", encryption: .passphrase("secret"))
/// print(result.verified)
/// ```
public enum FileMigration {
    /// Migrates `file` (overlaid with its WAL) into a new database at `output`, then checks it.
    /// The output must not exist. Throws ``MigrationError/inputDamaged(_:)`` when the input is not intact.
    public static func run(
        file: DatabaseFile, walPath: String? = nil, output: String, encryption: Encryption,
        cipher: CipherOptions = CipherOptions()
    ) throws -> MigrationResult {
        let salvager = Salvager(file: file, walPath: walPath)
        let writer = try RepairWriter(path: output, encryption: encryption, cipher: cipher)
        var sink = HashingSink(writer: writer)
        let report: RepairReport
        do {
            report = try salvager.run(into: &sink)
            try writer.close()
        } catch {
            try? writer.close()
            throw error
        }
        if let refused = sink.schema?.refusedTables.first { throw MigrationError.tableRefused(refused) }
        if let damage = damage(in: report) { throw MigrationError.inputDamaged(damage) }
        var configuration = Configuration(encryption: encryption, cipher: cipher)
        configuration.readOnly = true
        configuration.readerCount = 0
        let database = try Database(path: output, configuration: configuration)
        defer { try? database.close() }
        var checks: [MigrationTableCheck] = []
        for table in sink.tables where !table.name.lowercased().hasPrefix("sqlite_") {
            let input = sink.hashes[table.name] ?? TableHash()
            // A table OUTPUT lacks reads back as nothing: its check fails, the others go on.
            let outputHash = (try? database.read { connection in try readBack(table, connection: connection) })
            checks.append(
                MigrationTableCheck(
                    table: table.name, rowsIn: input.rows, rowsOut: outputHash?.rows ?? 0, hashIn: input.hex,
                    hashOut: outputHash?.hex ?? "missing"))
        }
        let objects = try database.read { connection in
            try MigrationObjectChecks.run(
                schema: sink.schema ?? Schema(entries: [], tables: [], isReadable: false), sequences: sink.sequences,
                issues: writer.outcome.issues, connection: connection)
        }
        var result = MigrationResult(
            inputProfile: file.settings.name, report: report, checks: checks, objectsFailed: writer.outcome.objectsFailed,
            objects: objects)
        writer.annotate(&result.report)
        return result
    }

    /// A description of the damage the salvage met, or nil when the input read cleanly.
    static func damage(in report: RepairReport) -> String? {
        var found: [String] = []
        if !report.schemaReadable { found.append("schema unreadable") }
        if report.pagesBadHMAC + report.pagesZero > 0 {
            found.append("\(report.pagesBadHMAC + report.pagesZero) unreadable pages")
        }
        if report.rowsDropped > 0 { found.append("\(report.rowsDropped) cells dropped") }
        if report.overflowChainsBroken > 0 { found.append("\(report.overflowChainsBroken) broken overflow chains") }
        if report.orphanLeavesAdopted + report.orphanLeavesInferred > 0 { found.append("orphan leaves") }
        if report.rowsDuplicate > 0 { found.append("\(report.rowsDuplicate) duplicate keys") }
        return found.isEmpty ? nil : found.joined(separator: ", ")
    }

    /// Reads every row of `table` back through Coffer and hashes it as the input side did.
    static func readBack(_ table: TableDescription, connection: Connection) throws -> TableHash {
        var hash = TableHash()
        let columns = table.columns.map { SQLIdentifier.quote($0.name) }.joined(separator: ", ")
        let withRowid = !table.withoutRowid
        let sql = "SELECT \(withRowid ? "_rowid_, " : "")\(columns) FROM \(SQLIdentifier.quote(table.name))"
        try connection.forEachRow(sql: sql) { statement in
            var values: [SalvagedValue] = []
            values.reserveCapacity(table.columns.count)
            let first = withRowid ? 1 : 0
            for column in first..<(first + table.columns.count) {
                values.append(salvagedValue(statement, at: column))
            }
            hash.add(rowid: withRowid ? statement.int64(at: 0) : nil, values: values)
        }
        return hash
    }
}
