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
import Crypto
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

/// Column `column` of the current row as the salvage engine represents it: TEXT and BLOB as their bytes.
func salvagedValue(_ statement: Statement, at column: Int) -> SalvagedValue {
    switch statement.value(at: column) {
    case .null: return .null
    case .integer(let number): return .integer(number)
    case .real(let number): return .real(number)
    case .text: return .text(statement.bytes(at: column))
    case .blob: return .blob(statement.bytes(at: column))
    }
}

/// An order-independent hash of a table's rows.
struct TableHash: Sendable {
    private(set) var rows = 0
    private var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)

    mutating func add(rowid: Int64?, values: [SalvagedValue]) {
        var hasher = SHA256()
        var buffer: [UInt8] = []
        func append(_ number: UInt64) {
            for shift in stride(from: 56, through: 0, by: -8) {
                buffer.append(UInt8(truncatingIfNeeded: number >> UInt64(shift)))
            }
        }
        if let rowid {
            buffer.append(0x52)
            append(UInt64(bitPattern: rowid))
        }
        for value in values {
            switch value {
            case .null: buffer.append(0)
            case .integer(let number):
                buffer.append(1)
                append(UInt64(bitPattern: number))
            case .real(let number):
                buffer.append(2)
                append(number.bitPattern)
            case .text(let bytes):
                buffer.append(3)
                append(UInt64(bytes.count))
                buffer += bytes
            case .blob(let bytes):
                buffer.append(4)
                append(UInt64(bytes.count))
                buffer += bytes
            }
        }
        hasher.update(data: buffer)
        let digest = Array(hasher.finalize())
        func word(_ index: Int) -> UInt64 {
            digest[(index * 8)..<(index * 8 + 8)].reduce(0) { $0 << 8 | UInt64($1) }
        }
        words = (words.0 &+ word(0), words.1 &+ word(1), words.2 &+ word(2), words.3 &+ word(3))
        rows += 1
    }

    var hex: String {
        [words.0, words.1, words.2, words.3].map { String(format: "%016llx", $0) }.joined()
    }
}

/// Forwards rows to the repair writer, hashing each table's rows on the way.
struct HashingSink: SalvageSink {
    let writer: RepairWriter
    private let defaults = ColumnDefaults()
    private(set) var tables: [TableDescription] = []
    private(set) var hashes: [String: TableHash] = [:]
    /// INPUT's AUTOINCREMENT counters (its sqlite_sequence rows).
    private(set) var sequences: [String: Int64] = [:]
    /// INPUT's schema, once the salvage has finished.
    private(set) var schema: Schema?

    init(writer: RepairWriter) { self.writer = writer }

    mutating func begin(table: TableDescription) throws {
        tables.append(table)
        try writer.begin(table: table)
    }

    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {
        let rowid: Int64? = table.withoutRowid ? nil : row.rowid
        // A record shorter than its table (a column added later) reads back with the missing columns
        // filled with their DEFAULT, on the output as on the input.
        hashes[table.name, default: TableHash()].add(rowid: rowid, values: defaults.complete(row.values, of: table))
        if table.name.lowercased() == "sqlite_sequence", row.values.count >= 2, case .text(let name) = row.values[0],
            case .integer(let value) = row.values[1]
        {
            sequences[String(decoding: name, as: UTF8.self)] = value
        }
        try writer.insert(row, into: table)
    }

    mutating func finish(schema: Schema) throws {
        self.schema = schema
        try writer.finish(schema: schema)
    }
}
