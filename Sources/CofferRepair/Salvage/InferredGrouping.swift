// InferredGrouping — orphan pages that fit no table, grouped by shape into inferred recovered_N tables.

/// Groups unattributed orphan leaves by shape into inferred tables.
struct InferredGrouping {
    struct Group {
        var fieldCount: Int
        var classes: [Set<Character>]
        var pages: [UInt32]
    }
    private(set) var groups: [Group] = []

    /// Shapes are compatible when field counts match and no column mixes text with numbers across them.
    mutating func add(_ summary: OrphanSummary) {
        guard summary.fieldCounts.count == 1, let count = summary.fieldCounts.first else {
            let count = summary.fieldCounts.max() ?? 0
            groups.append(Group(fieldCount: count, classes: summary.classes, pages: [summary.pageNumber]))
            return
        }
        for index in groups.indices where groups[index].fieldCount == count {
            let merged = zip(groups[index].classes, summary.classes).map { $0.union($1) }
            let conflicting = merged.contains { $0.contains("t") && ($0.contains("i") || $0.contains("r")) }
            if !conflicting {
                groups[index].classes = merged
                groups[index].pages.append(summary.pageNumber)
                return
            }
        }
        groups.append(Group(fieldCount: count, classes: summary.classes, pages: [summary.pageNumber]))
    }

    /// The table description for group `index`, named `<base>_<index+1>` (`recovered_1`, …).
    /// With `withoutRowid` (index-format records: a WITHOUT ROWID table's rows), the table is WITHOUT
    /// ROWID keyed on every column — the real key is unknown, and the whole record is unique.
    /// Otherwise (table leaves: a rowid table's rows) the table is `id INTEGER PRIMARY KEY` — the rowid —
    /// then `c1…` the record's fields; `c1` also reads the rowid when the first field is NULL in every
    /// record of the group (`firstFieldIsAlias`: the lost table's INTEGER PRIMARY KEY, stored as NULL).
    /// `taken` holds names already in use (lowercased); `_` is appended until the name is free.
    static func table(
        index: Int, group: Group, withoutRowid: Bool = false, taken: Set<String> = [], base: String = "recovered",
        firstFieldIsAlias: Bool? = nil
    ) -> TableDescription {
        var name = "\(base)_\(index + 1)"
        while taken.contains(name.lowercased()) { name += "_" }
        let fields = (0..<max(1, group.fieldCount)).map {
            ColumnDescription(name: "c\($0 + 1)", declaredType: "", affinity: .blob)
        }
        let list = fields.map(\.name).joined(separator: ", ")
        if withoutRowid {
            return TableDescription(
                name: name, rootPage: 0, sql: "CREATE TABLE \(name)(\(list), PRIMARY KEY(\(list))) WITHOUT ROWID",
                columns: fields, rowidAliasColumn: nil, withoutRowid: true, primaryKeyColumns: Array(fields.indices),
                isInferred: true)
        }
        let alias = firstFieldIsAlias ?? (group.classes.first?.isEmpty ?? false)
        var table = TableDescription(
            name: name, rootPage: 0, sql: "CREATE TABLE \(name)(id INTEGER PRIMARY KEY, \(list))",
            columns: [ColumnDescription(name: "id", declaredType: "INTEGER", affinity: .integer)] + fields,
            rowidAliasColumn: 0, withoutRowid: false, primaryKeyColumns: [0], isInferred: true)
        table.recoveredRowid = alias ? .firstFieldIsAlias : .besideRecord
        return table
    }
}
