// OrphanScorer — deciding which table an orphan page belongs to (the adoption rules).
//
// An orphan is an authenticated, well-formed leaf page that no B-tree walk reached (its parent was
// destroyed) — or a stale page: a free page of a plaintext file keeps its deleted rows, and when the
// freelist is lost (damaged trunk, header gone) nothing marks it free. Resurrecting a row is worse than
// losing one, so a doubtful orphan is dropped. It is attributed by evidence, never by guesswork:
// 1. Room (required): a live leaf of table T can only be orphaned where T's own walk failed. A table whose
//    tree was walked without a gap has no orphan leaves; otherwise every key of the page must lie inside
//    one hole (the key range (low, high] of a subtree the walk could not use, known from the interior
//    cells above it). WITHOUT ROWID tables (index trees, whose keys are records) only need some hole.
//    A record shorter than T's column count (legal after ALTER TABLE ADD COLUMN) needs T's own tree to
//    hold short records too: SQLite writes every column, so otherwise it is another table's (a dropped
//    `drafts(id, conversation_id, body)` leaf fits `messages` as a short record) — unless the freelist and
//    sqlite_master were both read completely: then no unclaimed leaf is free or another table's, and a
//    table whose tree was lost above its leaves (root gone) is known to have short records only from them.
//    Fit (required): every record of the page must fit the table (RowFit: column count, NULL rowid alias,
//    affinities). A table that one record does not fit is not a candidate.
// 2. Score among fitting tables:
//    +4 every record has exactly the table's column count (short records are legal but weaker evidence);
//    +1 per column whose values show the affinity positively (numbers in numeric columns, text in TEXT);
//    +3 the page's rowid range falls in a gap between the table's reached leaves (or the table reached
//       none), −6 it overlaps a reached leaf's range (those rowids already have an owner there);
//    +2 a neighbouring page (±1) is a reached leaf of the table (SQLite allocates tree pages together).
// 3. An index-format page is also the format of every real index. If every record of the page could be an
//    entry of a real index (same width, every field fitting the indexed column's affinity, a rowid table's
//    trailing rowid an integer naming a row that was salvaged or may have been lost in a hole of the
//    table's walk — IndexShape), the page may be that index's, and is ignored rather than
//    adopted into a WITHOUT ROWID table: permuted index entries must never become rows. Width alone is not
//    enough evidence: a WITHOUT ROWID table is often as wide as one of its indexes (receipts(message_id,
//    reader, read_at) and its index on (reader, read_at) both have three fields), and losing its root
//    would then lose every row.
// 4. The single best score wins. A tie for best, or a page that fits a table without room in it, is
//    dropped (`orphanPagesIgnored`). A page that fits no table at all goes to an inferred table
//    (`recovered_N`, grouped with other pages of the same shape) — but only when it cannot be a free page:
//    the freelist was walked completely, or there is no schema (page 1 lost; surviving freelist trunks
//    found by scanning are claimed first, see FreePages).

/// The evidence kept for one orphan page (no rows: rows are re-read when emitted, keeping memory bounded).
struct OrphanSummary {
    let pageNumber: UInt32
    let type: BTreePageType
    let minRowid: Int64?
    let maxRowid: Int64?
    /// Field count of each record, deduplicated.
    let fieldCounts: Set<Int>
    /// Per field position: the value classes seen (i integer, r real, t text, b blob).
    let classes: [Set<Character>]
    /// Candidate table indexes that every record fits, with their scores.
    var scores: [Int: Int] = [:]
    /// Whether every record fits some table of the schema (with or without room for the page in it).
    var fitsSomeTable = false
}

/// The rowid ranges of the leaves reached for one table.
struct ReachedRanges {
    var ranges: [(low: Int64, high: Int64)] = []
    var pages = Set<UInt32>()

    mutating func add(page: UInt32, low: Int64, high: Int64) {
        ranges.append((low, high))
        pages.insert(page)
    }

    /// Sorts the ranges by their low key. The walker enforces rowid bounds, so the reached leaves of one
    /// table never overlap each other and sorting by low also sorts by high.
    mutating func seal() { ranges.sort { $0.low < $1.low } }

    /// Whether [low, high] overlaps a reached leaf's range (binary search; requires `seal()`).
    func overlaps(low: Int64, high: Int64) -> Bool {
        var lower = 0
        var upper = ranges.count
        while lower < upper {
            let middle = (lower + upper) / 2
            if ranges[middle].high < low { lower = middle + 1 } else { upper = middle }
        }
        return lower < ranges.count && ranges[lower].low <= high
    }
}

enum OrphanScorer {
    static func classOf(_ value: SalvagedValue) -> Character? {
        switch value {
        case .null: return nil
        case .integer: return "i"
        case .real: return "r"
        case .text: return "t"
        case .blob: return "b"
        }
    }

    /// Rule 1: whether `table` has room for the page (a hole its keys fit in, no unexplained short record).
    static func mayBelong(summary: OrphanSummary, table: TableDescription, holes: [KeyRange], sawShortRecord: Bool)
        -> Bool
    {
        if !sawShortRecord, summary.fieldCounts.contains(where: { $0 < table.columns.count }) { return false }
        if table.withoutRowid { return !holes.isEmpty }
        guard let low = summary.minRowid, let high = summary.maxRowid else { return false }
        return holes.contains { $0.contains(first: low, last: high) }
    }

    static func score(summary: OrphanSummary, table: TableDescription, reached: ReachedRanges) -> Int {
        var score = 0
        if summary.fieldCounts == [table.columns.count] { score += 4 }
        let order = table.recordFieldColumns
        for (position, seen) in summary.classes.enumerated() where position < order.count {
            let affinity = table.columns[order[position]].affinity
            switch affinity {
            case .integer, .real, .numeric: if seen.contains("i") || seen.contains("r") { score += 1 }
            case .text: if seen.contains("t") { score += 1 }
            case .blob: break
            }
        }
        if let low = summary.minRowid, let high = summary.maxRowid {
            score += reached.overlaps(low: low, high: high) ? -6 : 3
        }
        if reached.pages.contains(summary.pageNumber &- 1) || reached.pages.contains(summary.pageNumber &+ 1) {
            score += 2
        }
        return score
    }

    /// The winning table index, or nil when no table fits or the best score is tied.
    static func winner(_ scores: [Int: Int]) -> Int? {
        guard let best = scores.values.max() else { return nil }
        let top = scores.filter { $0.value == best }
        return top.count == 1 ? top.first?.key : nil
    }
}

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
    /// `taken` holds names already in use (lowercased); `_` is appended until the name is free.
    static func table(
        index: Int, group: Group, withoutRowid: Bool = false, taken: Set<String> = [], base: String = "recovered"
    ) -> TableDescription {
        var name = "\(base)_\(index + 1)"
        while taken.contains(name.lowercased()) { name += "_" }
        let columns = (0..<max(1, group.fieldCount)).map {
            ColumnDescription(name: "c\($0 + 1)", declaredType: "", affinity: .blob)
        }
        let list = columns.map(\.name).joined(separator: ", ")
        let sql =
            withoutRowid
            ? "CREATE TABLE \(name)(\(list), PRIMARY KEY(\(list))) WITHOUT ROWID" : "CREATE TABLE \(name)(\(list))"
        return TableDescription(
            name: name, rootPage: 0, sql: sql, columns: columns, rowidAliasColumn: nil, withoutRowid: withoutRowid,
            primaryKeyColumns: withoutRowid ? Array(columns.indices) : [], isInferred: true)
    }
}

/// The record shape of one real index: per field, the affinity its values were stored under (nil: any value,
/// for an expression term or an unknown column), and whether the last field is a rowid (always an integer).
struct IndexShape: Equatable {
    var fields: [Affinity?]
    var endsWithRowid: Bool
    /// The indexed table's name (nil when unknown).
    var table: String? = nil

    /// Whether every record could be an entry of this index: same width, every field fits its column's
    /// affinity (RowFit rules), and a rowid table's trailing rowid is an integer. Affinities are what tell a
    /// WITHOUT ROWID table's rows from a same-width index's entries: the index permutes the columns, so its
    /// fields rarely fit them in table order, and a row's fields rarely fit them in index order.
    ///
    /// Text fits a numeric column when it does not look numeric, so affinities alone often admit a row of
    /// another table; the trailing rowid is sharper evidence: an index entry names a row of its table, whose
    /// rowid was salvaged or lies where the table's walk left a hole (`rowidPlausible`).
    func admits(_ records: [[SalvagedValue]], checkText: Bool, rowidPlausible: (Int64) -> Bool) -> Bool {
        records.allSatisfy { fields in
            guard fields.count == self.fields.count else { return false }
            for (index, value) in fields.enumerated() {
                if endsWithRowid, index == fields.count - 1 {
                    guard case .integer(let rowid) = value, rowidPlausible(rowid) else { return false }
                } else if let affinity = self.fields[index], !RowFit.fits(value, affinity, checkText: checkText) {
                    return false
                }
            }
            return true
        }
    }
}

enum IndexShapes {
    /// The record shapes of the schema's real indexes: the indexed terms plus the rowid (rowid tables) or
    /// plus the PRIMARY KEY columns not already indexed (WITHOUT ROWID tables). For an automatic index (no
    /// SQL) or an index of an unknown table, every width from 2 to the table's column count + 1 is assumed,
    /// with any value in any field.
    static func shapes(schema: Schema) -> [IndexShape] {
        var shapes: [IndexShape] = []
        let reader = CreateStatementReader()
        for entry in schema.indexes {
            let table = schema.tables.first { $0.name.lowercased() == entry.tableName.lowercased() }
            guard let table, let terms = table.isInferred ? nil : reader.indexedColumns(index: entry, table: table) else {
                let columnCount = table?.columns.count ?? 0
                for width in 2...max(2, columnCount + 1) {
                    shapes.append(IndexShape(fields: Array(repeating: nil, count: width), endsWithRowid: false))
                }
                continue
            }
            func affinity(_ name: String?) -> Affinity? {
                table.columns.first { $0.name.lowercased() == name?.lowercased() }?.affinity
            }
            var fields = terms.map(affinity)
            if table.withoutRowid {
                let indexed = Set(terms.compactMap { $0?.lowercased() })
                let extra = table.primaryKeyColumns.filter { !indexed.contains(table.columns[$0].name.lowercased()) }
                fields += extra.map { table.columns[$0].affinity }
                shapes.append(IndexShape(fields: fields, endsWithRowid: false))
            } else {
                shapes.append(IndexShape(fields: fields + [nil], endsWithRowid: true, table: table.name))
            }
        }
        return shapes
    }
}
