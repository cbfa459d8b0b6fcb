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
//    would then lose every row. Room, as in rule 1: when the freelist and sqlite_master were both read
//    completely, an unclaimed page is a live page of a tree whose walk failed, so only an index whose own
//    walk left a hole can own it; an index walked whole (contacts(email, name, phone) WITHOUT ROWID and its
//    intact index on (name, phone), whose entries (name, phone, email) have the rows' shape) is no reason
//    to ignore the table's leaves. When both the table and a same-shape index lost pages, the page is
//    ambiguous and ignored: losing rows is better than inventing them. Affinities, positively: the index
//    must explain the page at least as well as the best-scoring table, field by field (a number in a numeric
//    column, text in a TEXT one, an integer as the rowid). Text in a numeric column is legal, so it admits,
//    but it is weak: receipts(message_id, reader, read_at) rows read in the order of an index on
//    messages(conversation_id, sent_at) put `reader`'s text where `sent_at`'s numbers go, and when the table's
//    order shows every field and the index's does not, the page is the table's (a garbage run over both
//    roots lost all 2,264 receipts before).
// 4. The single best score wins. A tie for best, or a page that fits a table without room in it, is
//    dropped (`orphanPagesIgnored`). A page that fits no table at all goes to an inferred table
//    (`recovered_N`, grouped with other pages of the same shape) — but only when it cannot be a free page:
//    the freelist was walked completely, or there is no schema (page 1 lost; surviving freelist trunks
//    found by scanning are claimed first, see FreePages).

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
        if !sawShortRecord, summary.fieldCounts.contains(where: { $0 < table.recordWidth }) { return false }
        if table.withoutRowid { return !holes.isEmpty }
        guard let low = summary.minRowid, let high = summary.maxRowid else { return false }
        return holes.contains { $0.contains(first: low, last: high) }
    }

    static func score(summary: OrphanSummary, table: TableDescription, reached: ReachedRanges) -> Int {
        var score = 0
        if summary.fieldCounts == [table.recordWidth] { score += 4 }
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
