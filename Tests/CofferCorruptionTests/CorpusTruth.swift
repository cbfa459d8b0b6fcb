// CorpusTruth — what a pristine fixture holds, from two independent readers:
// - the real SQLCipher library (`LibraryReader`): every row's values, byte exact — the ground truth;
// - CofferCorruption's RowPlacement walk: which pages hold each row, and the record as stored (the shape
//   repair's inferred tables and `.recover`'s lost_and_found use).
// The two are joined by key; a test asserts they agree on every key, so the placement cannot drift.
// The history file (the fixture after phase 1) gives every row version that ever existed: an output row
// that is not a pristine row but is a history row was resurrected.

import CofferCorruption
import CofferRepair
import Foundation

/// A row's identity: its table and key.
struct RowID: Hashable, CustomStringConvertible {
    var table: String
    var key: [SalvagedValue]
    var description: String { "\(table)\(key)" }
}

struct CorpusTruth {
    /// Tables of the pristine file.
    let tables: [TableDescription]
    /// Every pristine row with its pages.
    let placed: [PlacedRow]
    /// table → key → values as the library returns them (`rowid` first for rowid tables).
    let rows: [String: [[SalvagedValue]: [SalvagedValue]]]
    /// table → every row version of the history (library form, as in `rows`).
    let history: [String: Set<[SalvagedValue]>]
    /// Raw signature (trailing NULLs trimmed) → row, for pristine rows.
    let rawPristine: [[SalvagedValue]: RowID]
    /// Raw signatures of every history row.
    let rawHistory: Set<[SalvagedValue]>
    /// Stored fields (rowid excluded) of internal rows a repair may bring back as an inferred table when the
    /// schema is lost (`sqlite_sequence`'s name and seq): neither correct nor junk.
    var rawInternal: Set<[SalvagedValue]> = []

    var placedByID: [RowID: PlacedRow] {
        Dictionary(placed.map { (RowID(table: $0.table, key: $0.key), $0) }, uniquingKeysWith: { first, _ in first })
    }

    static func load(_ fixture: ChatFixture) throws -> CorpusTruth {
        let (tables, placed) = try placement(fixture.path, fixture)
        let (historyTables, historyPlaced) = try placement(fixture.historyPath, fixture)
        return CorpusTruth(
            tables: tables, placed: placed,
            rows: try libraryRows(fixture.plaintextCopies?.pristine ?? fixture.path, fixture, tables),
            history: try libraryRows(fixture.plaintextCopies?.history ?? fixture.historyPath, fixture, historyTables)
                .mapValues { Set($0.values) },
            rawPristine: Dictionary(
                placed.map { (trimmed($0.rawSignature), RowID(table: $0.table, key: $0.key)) },
                uniquingKeysWith: { first, _ in first }),
            rawHistory: Set(historyPlaced.map { trimmed($0.rawSignature) }))
    }

    /// The key of a library-form row of `table`.
    static func key(_ values: [SalvagedValue], table: TableDescription) -> [SalvagedValue] {
        guard table.withoutRowid else { return Array(values.prefix(1)) }
        return table.primaryKeyColumns.map { values.indices.contains($0) ? values[$0] : .null }
    }

    /// `SELECT rowid, *` for rowid tables, `SELECT *` for WITHOUT ROWID tables.
    static func selectAll(_ table: TableDescription) -> String {
        let name = "\"" + table.name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        return table.withoutRowid ? "SELECT * FROM \(name)" : "SELECT rowid, * FROM \(name)"
    }

    static func trimmed(_ values: [SalvagedValue]) -> [SalvagedValue] {
        var values = values
        while values.last == .null { values.removeLast() }
        return values
    }

    private static func placement(_ path: String, _ fixture: ChatFixture) throws -> ([TableDescription], [PlacedRow]) {
        let file = try DatabaseFile(
            path: path, key: fixture.passphrase.map { Encryption.passphrase($0) } ?? .none, settings: fixture.settings)
        return RowPlacement.rows(in: file)
    }

    private static func libraryRows(_ path: String, _ fixture: ChatFixture, _ tables: [TableDescription]) throws
        -> [String: [[SalvagedValue]: [SalvagedValue]]]
    {
        var result: [String: [[SalvagedValue]: [SalvagedValue]]] = [:]
        for table in tables {
            let libraryKey = fixture.plaintextCopies == nil ? fixture.passphrase : nil
            let rows = try LibraryReader.rows(path, key: libraryKey, pageSize: fixture.pageSize, sql: selectAll(table))
            result[table.name] = Dictionary(rows.map { (key($0, table: table), $0) }, uniquingKeysWith: { first, _ in first })
        }
        return result
    }
}
