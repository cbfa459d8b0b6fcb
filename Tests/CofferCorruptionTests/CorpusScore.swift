// CorpusScore — classifies every row of a recovered database against the ground truth.
//
// A row of a table the pristine file has is looked up by key (rowid, or the WITHOUT ROWID primary key):
//   equal to the pristine row → correct; equal to a history version (deleted row, pre-update version) →
//   resurrected; another value under a pristine key → altered; an unknown key → junk.
// A row of any other table (repair's inferred `recovered_N`, `.recover`'s `lost_and_found`) has no schema, so
// it is matched by raw signature (rowid then stored fields; stored fields alone for a WITHOUT ROWID table): a pristine signature → correct, a history
// signature → resurrected, anything else → junk. A recovered field equal to the rowid just before it is also
// tried as the NULL stored for an INTEGER PRIMARY KEY.
// Correct rows are counted once per row identity, however many copies come back.

import CofferCorruption
import CofferRepair
import Foundation

struct CorpusScore: CustomStringConvertible {
    var bound = 0
    var recoveredInBound = 0
    var correct = 0
    var junk = 0
    var altered = 0
    var resurrected = 0
    /// Altered rows whose pages were all intact: never excusable, not even in plaintext.
    var alteredFromIntactPages = 0
    var missing: [RowID] = []
    var wrong: [String] = []

    var description: String {
        "bound \(bound) recovered \(recoveredInBound) correct \(correct) junk \(junk) altered \(altered) "
            + "resurrected \(resurrected) missing \(missing.prefix(8)) wrong \(wrong.prefix(4))"
    }

    /// Scores the database at `path` (repair output or `.recover` output).
    static func score(
        _ path: String, key: String?, pageSize: Int, truth: CorpusTruth, bound: [PlacedRow], damage: DamageReport
    ) throws -> CorpusScore {
        try score(path, key: key, pageSize: pageSize, truth: truth, bound: bound, isIntact: damage.isIntact)
    }

    /// Scores the database at `path`; `isIntact` says which pages of the pristine file survived. Tables for
    /// which `ignoring` is true (virtual tables and their shadow tables, checked by their queries instead)
    /// are not scored.
    static func score(
        _ path: String, key: String?, pageSize: Int, truth: CorpusTruth, bound: [PlacedRow], isIntact: (UInt32) -> Bool,
        ignoring: (String) -> Bool = { _ in false }
    ) throws -> CorpusScore {
        var score = CorpusScore()
        var correct = Set<RowID>()
        let placed = truth.placedByID
        let known = Dictionary(truth.tables.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        for name in try LibraryReader.tableNames(path, key: key, pageSize: pageSize) where !ignoring(name) {
            if let table = known[name] {
                for values in try LibraryReader.rows(path, key: key, pageSize: pageSize, sql: CorpusTruth.selectAll(table)) {
                    let rowKey = CorpusTruth.key(values, table: table)
                    let id = RowID(table: name, key: rowKey)
                    if truth.rows[name]?[rowKey] == values {
                        correct.insert(id)
                    } else if truth.history[name]?.contains(values) == true {
                        score.resurrected += 1
                        score.wrong.append("resurrected \(id)")
                    } else if truth.rows[name]?[rowKey] != nil {
                        score.altered += 1
                        score.wrong.append("altered \(id)")
                        if let row = placed[id], row.pages.allSatisfy(isIntact) { score.alteredFromIntactPages += 1 }
                    } else {
                        score.junk += 1
                        score.wrong.append("junk \(id)")
                    }
                }
            } else {
                let lostAndFound = name.hasPrefix("lost_and_found")
                // Repair's inferred rowid tables are `id` (the rowid) then the record's fields, the first reading
                // the rowid where it is the INTEGER PRIMARY KEY (stored NULL); an inferred WITHOUT ROWID table
                // (orphan index-format pages) holds bare records, the raw signature of a WITHOUT ROWID row.
                let rows = try LibraryReader.rows(path, key: key, pageSize: pageSize, sql: "SELECT * FROM \"\(name)\"")
                for values in rows {
                    var signature = CorpusTruth.trimmed(lostAndFound ? lostAndFoundSignature(values) : values)
                    if !lostAndFound, truth.rawPristine[signature] == nil, signature.count > 1, signature[1] == signature[0] {
                        signature = CorpusTruth.trimmed([signature[0], .null] + signature.dropFirst(2))
                    }
                    if let id = truth.rawPristine[signature] {
                        correct.insert(id)
                    } else if truth.rawInternal.contains(Array(signature.dropFirst())) {
                        continue
                    } else if truth.rawHistory.contains(signature) {
                        score.resurrected += 1
                        score.wrong.append("resurrected raw \(name) \(signature.prefix(2))")
                    } else {
                        score.junk += 1
                        score.wrong.append("junk raw \(name) \(signature.prefix(2))")
                    }
                }
            }
        }
        score.correct = correct.count
        score.bound = bound.count
        for row in bound {
            let id = RowID(table: row.table, key: row.key)
            if correct.contains(id) { score.recoveredInBound += 1 } else { score.missing.append(id) }
        }
        return score
    }

    /// lost_and_found columns: rootpgno, pgno, nfield, id, c0, c1, … → id (when not NULL) then nfield fields.
    private static func lostAndFoundSignature(_ values: [SalvagedValue]) -> [SalvagedValue] {
        guard values.count >= 4, case .integer(let fields) = values[2] else { return values }
        let id: [SalvagedValue] = values[3] == .null ? [] : [values[3]]
        return id + Array(values.dropFirst(4).prefix(Int(fields)))
    }
}
