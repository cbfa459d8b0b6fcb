// OrphanSummary — the evidence kept for one orphan page while orphans are scored (see OrphanScorer.swift).

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
