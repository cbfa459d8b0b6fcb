// Salvager+Orphans — steps 5 and 6 of the salvage (see Salvager.swift): pages no tree reached.
//
// Every table's tree has been walked before this runs, so an orphan's scores are final when its page is met:
// an adopted page is emitted at once from the records already decoded (ascending page order, after all tree
// rows, which keeps duplicate resolution deterministic: a rowid or key salvaged from a tree wins over an
// orphan's copy, and between orphans the lower page number wins). Leaves that fit no table become inferred
// tables only when they cannot be free pages; their pages are re-read once all of them are grouped. With no
// schema, index-format pages are decided once every rowid is known (an index's, or a WITHOUT ROWID table's).

import Foundation

extension Salvager {
    /// Scans every unclaimed page, adopts orphan leaves into their tables, groups the rest into inferred
    /// tables (appended to `schema`) and emits their rows. Unreadable pages are added to `badPages`.
    /// `everyTreeKnown`: the freelist and sqlite_master were read completely, so every unclaimed leaf is a
    /// live page of a table the schema names (see OrphanScorer, rule 1). `entriesLost`: sqlite_master lost
    /// entries, so a leaf that cannot be free (`mayInfer`) and fits no table with room for it is a page of a
    /// table or index whose entry is gone, inferred rather than ignored.
    func salvageOrphans<Sink: SalvageSink>(
        schema: inout Schema, badPages: inout Set<UInt32>, mayInfer: Bool, everyTreeKnown: Bool, entriesLost: Bool,
        walker: TreeWalker,
        overflow: OverflowReader, checkText: Bool, sink: inout Sink
    ) throws {
        for index in states.indices { states[index].reached.seal() }
        var orphanChains = Set<UInt32>()
        var unparseable: [UInt32] = []
        var grouping = InferredGrouping()
        var recordPages: [(summary: OrphanSummary, lastIntegers: [Int64]?)] = []
        var ambiguous: [OrphanSummary] = []
        // Rule 3 (OrphanScorer): when every tree is known, an index walked without a hole owns no orphan, so
        // only the indexes whose walk left one can claim a page; otherwise (a page may be free) every index can.
        let indexShapes = IndexShapes.shapes(schema: schema).filter {
            !everyTreeKnown || incompleteIndexes.contains($0.index)
        }
        for pageNumber in 1...max(1, source.pageCount) where source.pageCount >= 1 {
            if claimed.contains(pageNumber) || orphanChains.contains(pageNumber) { continue }
            tick()
            guard case .success(let bytes) = source.page(pageNumber) else {
                badPages.insert(pageNumber)
                continue
            }
            // A plaintext page of zeros that no tree, chain or freelist claims: zero-filled damage.
            if bytes.first == 0, ByteView(bytes).isAllZero {
                badPages.insert(pageNumber)
                continue
            }
            guard case .success(let parsed) = walker.parse(bytes: bytes, pageNumber: pageNumber) else {
                unparseable.append(pageNumber)
                continue
            }
            guard
                let (summary, records) = summarize(
                    parsed.page, parsed.cells, overflow: overflow, chains: &orphanChains, checkText: checkText,
                    everyTreeKnown: everyTreeKnown)
            else {
                if parsed.page.type != .tableInterior, !parsed.cells.isEmpty { unparseable.append(pageNumber) }
                continue
            }
            // The index must explain the records at least as well as the best table does: when every field
            // of the rows shows the table's affinities and the index's order leaves some field showing
            // nothing (text in its numeric column, say), the page is the table's.
            // (Index leaves only: a table leaf is never an index's.)
            let tablePositives =
                summary.type.isTable
                ? nil
                : OrphanScorer.winner(summary.scores).map {
                    IndexShapes.positiveFields(classes: summary.classes, table: states[$0].table)
                }
            let mayBeRealIndex =
                !summary.type.isTable
                && indexShapes.contains { shape in
                    shape.positiveFields(classes: summary.classes) >= (tablePositives ?? 0)
                        && shape.admits(records.compactMap(\.1), checkText: checkText) { rowid in
                            guard let state = states.first(where: { $0.table.name == shape.table }) else { return true }
                            return state.rowids.contains(rowid)
                                || state.holes.contains { $0.contains(first: rowid, last: rowid) }
                        }
                }
            let certain = materialOwner(of: pageNumber, summary: summary)
            if let winner = certain ?? (mayBeRealIndex ? nil : OrphanScorer.winner(summary.scores)) {
                report.orphanLeavesAdopted += 1
                adoptedPages.append(pageNumber)
                if certain != nil { report.leavesFromMaterial += 1 }
                let table = states[winner].table
                for (rowid, fields) in records {
                    guard let fields else {
                        report.overflowChainsBroken += 1
                        report.rowsDropped += 1
                        continue
                    }
                    guard let row = RowFit.row(fields: fields, rowid: rowid, table: table, checkText: checkText) else {
                        report.rowsDropped += 1
                        continue
                    }
                    try emit(row, tableIndex: winner, sink: &sink)
                }
            } else if summary.type == .tableLeaf, mayInfer, summary.scores.count >= 2 {
                // Fits several tables equally well (their roots lost, say): kept, never guessed into one.
                ambiguous.append(summary)
                report.orphanLeavesInferred += 1
                adoptedPages.append(pageNumber)
            } else if summary.type == .tableLeaf, mayInfer, !summary.fitsSomeTable || (entriesLost && summary.scores.isEmpty) {
                grouping.add(summary)
                report.orphanLeavesInferred += 1
                adoptedPages.append(pageNumber)
            } else if !summary.type.isTable, !schema.isReadable || (mayInfer && entriesLost), !summary.fitsSomeTable {
                // No schema, or sqlite_master lost entries (and the page is not free): a WITHOUT ROWID table's
                // page, or an index's. Decided once every rowid is known.
                let last = records.compactMap { $0.1?.last }
                let integers = last.compactMap { value -> Int64? in
                    if case .integer(let number) = value { return number }
                    return nil
                }
                recordPages.append((summary, integers.count == last.count ? integers : nil))
            } else {
                report.orphanPagesIgnored += 1
            }
        }
        report.pagesUnparseable = unparseable.filter { !orphanChains.contains($0) }.count
        var assignments: [(page: UInt32, table: Int)] = []
        for (index, group) in grouping.groups.enumerated() {
            let table = InferredGrouping.table(
                index: index, group: group, taken: Set(states.map { $0.table.name.lowercased() }))
            states.append(TableState(table: table))
            schema.tables.append(table)
            try sink.begin(table: table)
            assignments += group.pages.map { ($0, states.count - 1) }
        }
        for (ordinal, (pages, base)) in Self.ambiguousGroups(ambiguous, names: states.map(\.table.name)).enumerated() {
            let fieldCount = pages.flatMap(\.fieldCounts).max() ?? 0
            // The first field's value classes over every page (empty: NULL in every record, the alias).
            let firstClasses = pages.map { $0.classes.first ?? [] }.reduce(into: Set<Character>()) { $0.formUnion($1) }
            let group = InferredGrouping.Group(
                fieldCount: fieldCount, classes: [firstClasses], pages: pages.map(\.pageNumber))
            let table = InferredGrouping.table(
                index: ordinal, group: group, taken: Set(states.map { $0.table.name.lowercased() }), base: base)
            states.append(TableState(table: table))
            schema.tables.append(table)
            try sink.begin(table: table)
            assignments += group.pages.map { ($0, states.count - 1) }
        }
        assignments.sort { $0.page < $1.page }
        for assignment in assignments {
            try emitOrphan(
                assignment.page, tableIndex: assignment.table, walker: walker, overflow: overflow,
                checkText: checkText, sink: &sink)
        }
        try inferRecordTables(
            recordPages, firstIndex: grouping.groups.count, schema: &schema, walker: walker, overflow: overflow,
            checkText: checkText, sink: &sink)

    }

    /// Leaves that fit several tables equally, split into groups that can each be one table: in page order,
    /// a leaf whose rowids overlap the group's, or that fits another set of tables, starts a new group (two
    /// tables' leaves never share a rowid range). Each group is named after the tables it may belong to,
    /// `recovered_<a>_or_<b>`, so the report says where its rows came from.
    static func ambiguousGroups(_ leaves: [OrphanSummary], names: [String]) -> [([OrphanSummary], String)] {
        var groups: [([OrphanSummary], String)] = []
        var ranges: [(Int64, Int64)] = []
        var candidates: Set<Int> = []
        for leaf in leaves.sorted(by: { $0.pageNumber < $1.pageNumber }) {
            let low = leaf.minRowid ?? .min
            let high = leaf.maxRowid ?? .max
            let keys = Set(leaf.scores.keys)
            if groups.isEmpty || keys != candidates || ranges.contains(where: { low <= $0.1 && $0.0 <= high }) {
                let base = "recovered_" + keys.sorted().map { names[$0] }.joined(separator: "_or_")
                groups.append(([], base))
                ranges = []
                candidates = keys
            }
            groups[groups.count - 1].0.append(leaf)
            ranges.append((low, high))
        }
        return groups
    }

    /// Index-format orphan pages when there is no schema: each is a WITHOUT ROWID table's or an index's.
    /// An index of a rowid table ends every entry with the rowid of a row; so a page whose records all end
    /// with an integer, 90% of them a salvaged rowid (an index may still hold entries of rows lost with
    /// their pages), is taken for an index and ignored (an index of a WITHOUT ROWID table ends with its key
    /// columns, often the same integers — a message id, say: ignored too, and so may a real table be). The rest are grouped
    /// by shape into inferred tables whose rows are the records, in record order, deduplicated.
    func inferRecordTables<Sink: SalvageSink>(
        _ pages: [(summary: OrphanSummary, lastIntegers: [Int64]?)], firstIndex: Int, schema: inout Schema,
        walker: TreeWalker, overflow: OverflowReader, checkText: Bool, sink: inout Sink
    ) throws {
        guard !pages.isEmpty else { return }
        let rowidTables = states.filter { !$0.table.withoutRowid }
        func salvaged(_ rowid: Int64) -> Bool { rowidTables.contains { $0.rowids.contains(rowid) } }
        var grouping = InferredGrouping()
        for page in pages {
            if let last = page.lastIntegers, last.filter(salvaged).count * 10 >= last.count * 9 {
                report.orphanPagesIgnored += 1
                continue
            }
            grouping.add(page.summary)
            report.orphanLeavesInferred += 1
            adoptedPages.append(page.summary.pageNumber)
        }
        var assignments: [(page: UInt32, table: Int)] = []
        for (index, group) in grouping.groups.enumerated() {
            let table = InferredGrouping.table(
                index: firstIndex + index, group: group, withoutRowid: true,
                taken: Set(states.map { $0.table.name.lowercased() }))
            states.append(TableState(table: table))
            schema.tables.append(table)
            try sink.begin(table: table)
            assignments += group.pages.map { ($0, states.count - 1) }
        }
        for assignment in assignments.sorted(by: { $0.page < $1.page }) {
            try emitOrphan(
                assignment.page, tableIndex: assignment.table, walker: walker, overflow: overflow,
                checkText: checkText, sink: &sink)
        }
    }

    /// The table the backup material attributes orphan page `pageNumber` to, when the page's stored bytes
    /// still match the material's checksum, every record fits the table and the table has room for it
    /// (see SalvageHints). The main file's image is what the checksum describes, so a page the WAL
    /// overrides is left to scoring.
    func materialOwner(of pageNumber: UInt32, summary: OrphanSummary) -> Int? {
        guard let hint = hints?.leafOwners[pageNumber], wal?.index.frames[pageNumber] == nil,
            let owner = states.firstIndex(where: { $0.table.name == hint.name && !$0.table.isInferred }),
            summary.scores[owner] != nil, let raw = file.rawPage(pageNumber),
            PageChecksum.of(raw) == hint.checksum
        else { return nil }
        return owner
    }

    /// Summarises and scores an orphan leaf, returning also every cell's decoded fields (nil where the
    /// overflow chain is broken), or returns nil if it holds no cell or any record fails to
    /// decode (then it is not trusted as a leaf at all). Overflow failures only drop their row (counted at
    /// emission). Each record is checked against every table of the page's kind (rowid tables for table
    /// leaves, WITHOUT ROWID tables for index pages); the records are discarded afterwards.
    func summarize(
        _ page: BTreePage, _ cells: [BTreeCell], overflow: OverflowReader, chains: inout Set<UInt32>, checkText: Bool,
        everyTreeKnown: Bool = false
    ) -> (OrphanSummary, [(Int64?, [SalvagedValue]?)])? {
        guard page.type != .tableInterior, !cells.isEmpty else { return nil }
        var counts = Set<Int>()
        var classes: [Set<Character>] = []
        var records: [(Int64?, [SalvagedValue])] = []
        var all: [(Int64?, [SalvagedValue]?)] = []
        for cell in cells {
            var pages: [UInt32] = []
            var payload = cell.localPayload
            if let first = cell.overflowPage {
                guard case .success(let chain) = overflow.read(first: first, remaining: cell.payloadSize - payload.count)
                else {
                    all.append((cell.rowid, nil))
                    continue
                }
                payload += chain.bytes
                pages = chain.pages
            }
            guard let fields = RecordDecoder.decode(payload) else { return nil }
            chains.formUnion(pages)
            records.append((cell.rowid, fields))
            all.append((cell.rowid, fields))
            counts.insert(fields.count)
            while classes.count < fields.count { classes.append([]) }
            for (index, value) in fields.enumerated() {
                if let kind = OrphanScorer.classOf(value) { classes[index].insert(kind) }
            }
        }
        guard !records.isEmpty else { return nil }
        var summary = OrphanSummary(
            pageNumber: page.pageNumber, type: page.type, minRowid: cells.compactMap(\.rowid).min(),
            maxRowid: cells.compactMap(\.rowid).max(),
            fieldCounts: counts, classes: classes)
        for (index, state) in states.enumerated() where state.table.withoutRowid == !page.type.isTable {
            let fitsAll = records.allSatisfy {
                RowFit.row(fields: $0.1, rowid: $0.0, table: state.table, checkText: checkText) != nil
            }
            guard fitsAll else { continue }
            summary.fitsSomeTable = true
            if OrphanScorer.mayBelong(
                summary: summary, table: state.table, holes: state.holes,
                sawShortRecord: state.sawShortRecord || everyTreeKnown)
            {
                summary.scores[index] = OrphanScorer.score(summary: summary, table: state.table, reached: state.reached)
            }
        }
        return (summary, all)
    }

    func emitOrphan<Sink: SalvageSink>(
        _ pageNumber: UInt32, tableIndex: Int, walker: TreeWalker, overflow: OverflowReader, checkText: Bool,
        sink: inout Sink
    ) throws {
        guard case .success(let parsed) = walker.parse(pageNumber) else { return }
        let table = states[tableIndex].table
        var chainPages: [UInt32] = []
        for cell in parsed.cells {
            guard let fields = payloadFields(cell, overflow: overflow, chainPages: &chainPages) else {
                report.rowsDropped += 1
                continue
            }
            // An inferred table of index-format records: the record is the row (BLOB affinity), keyed on every
            // column, so a record of another width or with a NULL (never in a key) is not one of its rows.
            let inferredRecord = table.isInferred && table.withoutRowid
            let recordFits = fields.count == table.columns.count && !fields.contains(.null)
            guard
                let row = inferredRecord
                    ? (recordFits ? SalvagedRow(rowid: nil, values: fields) : nil)
                    : RowFit.row(fields: fields, rowid: cell.rowid, table: table, checkText: checkText)
            else {
                report.rowsDropped += 1
                continue
            }
            try emit(row, tableIndex: tableIndex, sink: &sink)
        }
    }

}
