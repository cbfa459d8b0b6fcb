import CofferEngine

/// What a fetch read: per table, which columns and which rows. A commit whose changes miss it cannot
/// change the fetched value.
///
/// Worked out by ``ReadRegionRecorder`` from the statements the fetch ran.
struct ReadRegion: Sendable, Equatable {
    /// What was read of one table.
    struct Table: Sendable, Equatable {
        /// Lower-cased columns read; empty when only the rows' existence was (`count(*)`); nil: any.
        var columns: Set<String>?
        /// The rowids of the only rows read (primary-key lookups); nil: any row.
        var rowIDs: Set<Int64>?
        /// Lower-cased columns of the table's unique indexes, when it has any: an insert, or an update of
        /// one of these, may delete other rows (`OR REPLACE`), which SQLite's update hook does not report.
        var replacingColumns: Set<String>?

        static let everything = Table(columns: nil, rowIDs: nil)

        mutating func formUnion(_ other: Table) {
            columns = columns.flatMap { mine in other.columns.map { mine.union($0) } }
            rowIDs = rowIDs.flatMap { mine in other.rowIDs.map { mine.union($0) } }
            replacingColumns = replacingColumns.map { $0.union(other.replacingColumns ?? []) } ?? other.replacingColumns
        }

        /// True when `row` (of this table) may change what was read.
        func isTouched(by row: RowChange) -> Bool {
            if let replacingColumns, mayReplace(row, replacingColumns) { return true }
            if let rowIDs, !rowIDs.contains(row.rowID) { return false }
            guard row.kind == .update, let columns, let updated = row.updatedColumns else { return true }
            return !updated.isDisjoint(with: columns)
        }

        private func mayReplace(_ row: RowChange, _ unique: Set<String>) -> Bool {
            switch row.kind {
            case .insert: return true
            case .delete: return false
            case .update: return row.updatedColumns.map { !$0.isDisjoint(with: unique) } ?? true
            }
        }
    }

    /// By lower-cased table name; nil when the fetch may have read anything (another schema, an
    /// unexpected plan).
    var tables: [String: Table]?

    static let everything = ReadRegion(tables: nil)

    func isTouched(by changes: DatabaseChangeSet) -> Bool {
        guard let tables, !changes.isWholeDatabase else { return true }
        for table in changes.lowercasedTables {
            guard let read = tables[table] else { continue }
            if read == .everything { return true }
            if changes.touches(lowercased: table, where: read.isTouched(by:)) { return true }
        }
        return false
    }

    mutating func formUnion(_ other: ReadRegion) {
        guard var mine = tables, let theirs = other.tables else {
            tables = nil
            return
        }
        mine.merge(theirs) { first, second in
            var merged = first
            merged.formUnion(second)
            return merged
        }
        tables = mine
    }
}
