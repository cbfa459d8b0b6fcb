// MigrationObjectChecks — every schema object a migration copies, checked in OUTPUT.
//
// Tables are checked row by row (``MigrationTableCheck``). Every other object of INPUT's schema is looked
// up in OUTPUT's sqlite_master once the copy is closed: an index, view or trigger is copied when OUTPUT has
// an object of the same kind and name with the same SQL; a virtual table when OUTPUT has it with the same
// SQL (its shadow tables are among the tables checked row by row); sqlite_sequence when every counter of
// INPUT has the same value in OUTPUT. A virtual table whose module this SQLite lacks is reported as kept
// as tables (its shadow tables' rows are copied and checked), never as copied.

import Coffer

/// The check of one non-table schema object of a migration.
public struct MigrationObjectCheck: Sendable, Codable, Equatable {
    /// What became of the object.
    public enum Verdict: String, Sendable, Codable {
        /// OUTPUT has it, as INPUT declared it.
        case copied
        /// A virtual table whose module this SQLite lacks: its shadow tables were copied as tables.
        case keptAsTables = "kept_as_tables"
        /// OUTPUT lacks it, or has it differently.
        case missing
    }

    /// "index", "view", "trigger", "virtual table" or "sqlite_sequence".
    public var kind: String
    /// Its name.
    public var name: String
    /// What became of it.
    public var verdict: Verdict
    /// Why, when it was not copied.
    public var detail: String = ""
}

enum MigrationObjectChecks {
    /// Checks every index, view, trigger and virtual table of `schema`, and the AUTOINCREMENT counters
    /// in `sequences` (INPUT's sqlite_sequence rows), against OUTPUT.
    static func run(
        schema: Schema, sequences: [String: Int64], issues: [SchemaIssue], connection: Connection
    ) throws -> [MigrationObjectCheck] {
        var present: [String: (type: String, sql: String?)] = [:]
        for row in try connection.fetchAll(sql: "SELECT type, name, sql FROM sqlite_master") {
            guard let type: String = row["type"], let name: String = row["name"] else { continue }
            present[name] = (type, row["sql"])
        }
        func reason(_ name: String) -> String {
            issues.first { $0.name == name }?.reason ?? "not in OUTPUT"
        }
        var checks: [MigrationObjectCheck] = []
        for virtual in schema.virtualTables {
            var check = MigrationObjectCheck(kind: "virtual table", name: virtual.name, verdict: .copied)
            if !virtual.isAvailable {
                check.verdict = .keptAsTables
                check.detail =
                    "\(virtual.module) table not creatable in this SQLite (\(virtual.unavailableReason)): its shadow tables were copied as tables"
            } else if present[virtual.name]?.sql != virtual.sql {
                check.verdict = .missing
                check.detail = reason(virtual.name)
            }
            checks.append(check)
        }
        for entry in schema.entries where entry.kind != .table {
            // Automatic indexes come with their table's constraints, not from SQL of their own.
            guard let sql = entry.sql else { continue }
            let copied = present[entry.name].map { $0.type == entry.kind.rawValue && $0.sql == sql } ?? false
            checks.append(
                MigrationObjectCheck(
                    kind: entry.kind.rawValue, name: entry.name, verdict: copied ? .copied : .missing,
                    detail: copied ? "" : reason(entry.name)))
        }
        if !sequences.isEmpty {
            var output: [String: Int64] = [:]
            if present["sqlite_sequence"] != nil {
                for row in try connection.fetchAll(sql: "SELECT name, seq FROM sqlite_sequence") {
                    if let name: String = row["name"], let value: Int64 = row["seq"] { output[name] = value }
                }
            }
            let differing = sequences.filter { output[$0.key] != $0.value }.keys.sorted()
            checks.append(
                MigrationObjectCheck(
                    kind: "sqlite_sequence", name: "sqlite_sequence", verdict: differing.isEmpty ? .copied : .missing,
                    detail: differing.isEmpty ? "" : "counters differ: \(differing.joined(separator: ", "))"))
        }
        return checks
    }
}
