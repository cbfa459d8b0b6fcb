// Salvager — the repair engine: schema, tree walks, orphan adoption, rows to a sink.
//
// Order of work, and why:
// 1. Read sqlite_master from page 1. Its pages are claimed first.
// 2. Walk every table from its root (rowid tables: cells of table leaves; WITHOUT ROWID tables: cells of
//    every page, since an index B-tree keeps entries in interior cells too). Each cell's payload is
//    completed from its overflow chain strictly (OverflowReader), decoded (RecordDecoder) and checked
//    against the table (RowFit). Failures are dropped and counted — never stored truncated.
// 3. Walk every real index from its root only to claim its pages (indexes are rebuilt, not salvaged).
// 4. Claim the freelist: freelist pages are never scanned, so deleted rows are never resurrected. Free
//    space inside live pages is never read either — only cells named by the cell-pointer array. When the
//    freelist cannot be walked completely (FreePages), surviving trunks are found by scanning, and every
//    orphan is treated as possibly free.
// 5. Scan every unclaimed page. An authenticated, well-formed leaf is an orphan: summarise it, score it
//    against the tables (OrphanScorer: only tables whose walk left a hole its keys fit in), then emit its
//    rows into the winner or, when it fits no table and cannot be a free page, an inferred table.
//    Duplicates resolve deterministically: a rowid (or WITHOUT ROWID key) already salvaged from a tree wins
//    over an orphan's copy; between orphans the lower page number wins.
// 6. With no schema, index-format orphans are a WITHOUT ROWID table's rows or an index's entries: once
//    every rowid is known, pages whose records end in salvaged rowids are taken for indexes, the rest are
//    inferred as WITHOUT ROWID tables.
// Backup repair material (SalvageHints), when given, supplies the schema if sqlite_master is unreadable
// and attributes orphan leaves whose stored bytes still match their recorded checksum.
// Memory: one page at a time plus, per table, the salvaged rowids as runs (RowidSet) or the salvaged keys
// of a WITHOUT ROWID table, per-leaf rowid ranges, and one small summary per orphan page. No row is kept after it is handed to the sink.

import Foundation

/// Salvages the rows of a damaged database into a ``SalvageSink``.
///
/// ```swift
/// let salvager = try Salvager(path: "broken.db", key: .passphrase("secret"))
/// var sink = CollectingSink()
/// let report = try salvager.run(into: &sink) { progress in print(progress.pagesScanned) }
/// print(report.rowsSalvaged)
/// ```
public final class Salvager {
    /// The pages salvaged: the file, overlaid with its WAL when one is present and valid.
    public let pager: Pager
    /// The main database file.
    public var file: DatabaseFile { pager.file }
    /// The page source used (the file, overlaid with its WAL when one is present and valid).
    public var source: PageSource { pager.source }
    /// The WAL overlay, if a WAL was found.
    public var wal: WALOverlay? { pager.wal }
    /// Evidence from backup repair material (schema, leaf checksums), used only where the file's own
    /// structure is lost; see ``SalvageHints``.
    public var hints: SalvageHints?
    /// The orphan pages the last run adopted into a table or an inferred one (for `--page-map`).
    public internal(set) var adoptedPages: [UInt32] = []

    /// Opens `path` and, when `useWAL` is true, its WAL: `walPath`, or `path-wal` when that exists.
    /// `salt` overrides a damaged salt (see ``DatabaseFile/init(path:key:settings:salt:)``).
    public convenience init(
        path: String, key: Encryption, settings: CipherSettings = .sqlcipher3, salt: [UInt8]? = nil,
        walPath: String? = nil, useWAL: Bool = true
    ) throws {
        try self.init(
            file: DatabaseFile(path: path, key: key, settings: settings, salt: salt), walPath: walPath, useWAL: useWAL)
    }

    /// Salvages an already opened file (for example from ``ProfileDetection/open(path:key:candidates:salt:)``),
    /// overlaid when `useWAL` is true with `walPath`, or `<path>-wal` when that exists.
    public init(file: DatabaseFile, walPath: String? = nil, useWAL: Bool = true) {
        pager = Pager(file: file, walPath: walPath, useWAL: useWAL)
    }

    struct TableState {
        var table: TableDescription
        var rowids = RowidSet()
        var keys = Set<[SalvagedValue]>()
        var reached = ReachedRanges()
        /// Key ranges of the table's own tree that the walk could not reach: only there can an orphan leaf
        /// of the table be live (see OrphanScorer, rule 1).
        var holes: [KeyRange] = []
        /// Whether the tree held a record shorter than the table (ALTER TABLE ADD COLUMN happened).
        var sawShortRecord = false
        var rows = 0
    }

    var report = RepairReport()
    var states: [TableState] = []
    /// The real indexes whose walk left a hole (a page lost, rejected or cross-linked): only their pages can
    /// be orphans (see OrphanScorer, rule 3).
    var incompleteIndexes = Set<String>()
    var claimed = Set<UInt32>()
    var textEncoding = TextEncoding.utf8
    var pagesScanned = 0
    var progress: ((SalvageProgress) -> Void)?

    /// Runs the salvage. Tables are begun in schema order, rows follow; `sink.finish` is called last.
    /// `progress` is called every 256 pages scanned and at the end.
    public func run<Sink: SalvageSink>(
        into sink: inout Sink, progress: ((SalvageProgress) -> Void)? = nil
    ) throws -> RepairReport {
        let started = Date()
        report = RepairReport()
        report.pageSize = source.pageSize
        report.profile = file.settings.name
        report.pagesTotal = Int(source.pageCount)
        self.progress = progress
        claimed = []
        adoptedPages = []
        pagesScanned = 0
        let walker = TreeWalker(source: source)
        let overflow = OverflowReader(source: source)

        var schema = Schema.read(from: source, visited: &claimed)
        if !schema.isReadable, hints == nil, let older = wal?.olderPageOne() {
            // Page 1's newest version is lost in the WAL: its older version still names the tables (every
            // tree is walked from the current pages; only a table created or dropped since can be misnamed).
            var olderClaimed = claimed.subtracting([1])
            let fromOlder = Schema.read(from: PageOneOverride(base: source, pageOne: older), visited: &olderClaimed)
            if fromOlder.isReadable {
                schema = fromOlder
                schema.unreadablePages.append(1)
                claimed = olderClaimed
                report.schemaFromOlderPageOne = true
            }
        }
        report.schemaReadable = schema.isReadable
        if !schema.isReadable, let hints {
            // sqlite_master is gone: the material's schema names the tables and their roots.
            let unreadable = schema.unreadablePages
            schema = hints.schema(pageCount: source.pageCount)
            schema.unreadablePages = unreadable
            report.schemaFromMaterial = true
        } else if !schema.isReadable {
            schema.recoverOrphanLeaves(from: source, claimed: &claimed)
            report.schemaLeavesRecovered = schema.recoveredLeaves.count
        }
        if !report.schemaFromMaterial { report.schemaIssues += schema.lostEntryIssues }
        var badPages = Set(schema.unreadablePages)
        states = schema.tables.map { TableState(table: $0) }
        for state in states { try sink.begin(table: state.table) }
        textEncoding = declaredTextEncoding() ?? .utf8
        report.textEncoding = Int(textEncoding.rawValue)
        let checkText = textEncoding == .utf8

        // 2. Tables from their roots.
        for index in states.indices {
            let table = states[index].table
            var chainPages: [UInt32] = []
            let stats = try walker.walk(root: table.rootPage, visited: &claimed, expectTable: !table.withoutRowid) {
                page, cells in
                tick()
                if !table.withoutRowid, page.type == .tableLeaf, let low = cells.first?.rowid, let high = cells.last?.rowid {
                    states[index].reached.add(page: page.pageNumber, low: low, high: high)
                }
                guard table.withoutRowid || page.type == .tableLeaf else { return }
                try emitTreeCells(
                    cells, tableIndex: index, overflow: overflow, chainPages: &chainPages, checkText: checkText, sink: &sink)
            }
            claimed.formUnion(chainPages)
            badPages.formUnion(stats.unreadablePages)
            states[index].holes = stats.holes
        }
        // The writer may build indexes from here on, while this thread walks the input's indexes (see
        // RepairWriter+EarlyIndexes); rows adopted from orphans below still reach their tables.
        try sink.tableTreesWalked(schema: schema)

        // 3. Real indexes: claim their pages and overflow chains.
        incompleteIndexes = []
        for entry in schema.indexes {
            var chainPages: [UInt32] = []
            let stats = walker.walk(root: entry.rootPage, visited: &claimed, expectTable: false) { _, cells in
                tick()
                for cell in cells {
                    guard let first = cell.overflowPage,
                        case .success(let chain) = overflow.read(
                            first: first, remaining: cell.payloadSize - cell.localPayload.count)
                    else { continue }
                    chainPages += chain.pages
                }
            }
            claimed.formUnion(chainPages)
            badPages.formUnion(stats.unreadablePages)
            if !stats.holes.isEmpty { incompleteIndexes.insert(entry.name) }
        }

        // 4. Freelist, pointer-map pages (auto-vacuum) and the lock-byte page: never data. When the freelist
        // cannot be walked completely, surviving trunks are found by scanning (FreePages).
        var freelistComplete = false
        if case .success(let page1) = source.page(1) {
            let header = ByteView(page1)
            let free = FreePages.fromHeader(source: source, header: header)
            claimed.formUnion(free.pages)
            freelistComplete = free.complete
            claimed.formUnion(PageRoles.pointerMapPages(source: source, header: header))
        }
        let lockByte = DatabaseHeader.lockBytePage(pageSize: source.pageSize)
        claimed.insert(lockByte)
        if !freelistComplete {
            for (trunk, leaves) in FreePages.scanTrunks(source: source, skip: claimed, reached: claimed) {
                claimed.insert(trunk)
                claimed.formUnion(leaves)
            }
        }
        // Unattributed leaves become inferred tables only when they cannot be free pages: the freelist is
        // fully known, or there is no schema at all (page 1 lost; surviving trunks were claimed above).
        let mayInfer = freelistComplete || !schema.isReadable

        // No schema and no material: every surviving table tree becomes a table of its own (Salvager+Roots).
        if !schema.isReadable, hints == nil {
            try salvageRootlessTrees(schema: &schema, walker: walker, overflow: overflow, checkText: checkText, sink: &sink)
        }

        // 5–6. Orphans (Salvager+Orphans.swift).
        try salvageOrphans(
            schema: &schema, badPages: &badPages, mayInfer: mayInfer,
            everyTreeKnown: freelistComplete && schema.isComplete && hints == nil,
            entriesLost: schema.isReadable && !schema.isComplete && hints == nil, walker: walker, overflow: overflow,
            checkText: checkText, sink: &sink)
        // A zeroed page is damage (see PageDecoder), counted apart from pages that failed their HMAC.
        report.pagesZero =
            badPages.filter { page in
                switch source.page(page) {
                case .failure(.zeroed): true
                case .success(let bytes): ByteView(bytes).isAllZero
                case .failure: false
                }
            }.count
        report.pagesBadHMAC = badPages.count - report.pagesZero
        report.pagesOk = max(0, report.pagesTotal - badPages.count)
        report.walFramesUsed = wal?.framesUsed ?? 0
        report.walFramesBad = wal?.framesBad ?? 0
        for state in states { report.tables[state.table.name] = state.rows }
        report.seconds = Date().timeIntervalSince(started)
        progress?(SalvageProgress(pagesScanned: pagesScanned, pagesTotal: report.pagesTotal, rowsSalvaged: report.rowsSalvaged))
        try sink.finish(schema: schema)
        return report
    }

    /// Counts a page scanned; reports progress every 256 pages.
    func tick() {
        pagesScanned += 1
        if pagesScanned % 256 == 0 {
            progress?(
                SalvageProgress(pagesScanned: pagesScanned, pagesTotal: report.pagesTotal, rowsSalvaged: report.rowsSalvaged))
        }
    }

    /// The decoded fields of a cell's full payload, or nil (overflow failures are counted).
    func payloadFields(_ cell: BTreeCell, overflow: OverflowReader, chainPages: inout [UInt32]) -> [SalvagedValue]? {
        var payload = cell.localPayload
        if let first = cell.overflowPage {
            switch overflow.read(first: first, remaining: cell.payloadSize - payload.count) {
            case .success(let chain):
                payload += chain.bytes
                chainPages += chain.pages
            case .failure:
                report.overflowChainsBroken += 1
                return nil
            }
        }
        return RecordDecoder.decode(payload)
    }

    /// Emits the rows of a tree page's cells into table `tableIndex`; cells that do not decode or fit are
    /// dropped and counted.
    func emitTreeCells<Sink: SalvageSink>(
        _ cells: [BTreeCell], tableIndex: Int, overflow: OverflowReader, chainPages: inout [UInt32], checkText: Bool,
        sink: inout Sink
    ) throws {
        let table = states[tableIndex].table
        for cell in cells {
            guard let fields = payloadFields(cell, overflow: overflow, chainPages: &chainPages),
                let row = RowFit.row(fields: fields, rowid: cell.rowid, table: table, checkText: checkText)
            else {
                report.rowsDropped += 1
                continue
            }
            if fields.count < table.recordWidth { states[tableIndex].sawShortRecord = true }
            try emit(row, tableIndex: tableIndex, sink: &sink)
        }
    }

    func emit<Sink: SalvageSink>(_ row: SalvagedRow, tableIndex: Int, sink: inout Sink) throws {
        let table = states[tableIndex].table
        if table.withoutRowid {
            let key = table.primaryKeyColumns.map { row.values.indices.contains($0) ? row.values[$0] : .null }
            guard states[tableIndex].keys.insert(key).inserted else {
                report.rowsDuplicate += 1
                return
            }
        } else if let rowid = row.rowid {
            guard states[tableIndex].rowids.insert(rowid).inserted else {
                report.rowsDuplicate += 1
                return
            }
        }
        if textEncoding == .utf8 {
            try sink.insert(row, into: table)
        } else {
            var converted = row
            converted.values = row.values.map(textEncoding.utf8)
            try sink.insert(converted, into: table)
        }
        states[tableIndex].rows += 1
        report.rowsSalvaged += 1
    }

    /// The database text encoding from header offset 56, or nil when page 1 is unreadable or the field is
    /// not one of SQLite's (0 means UTF-8 in a file with no schema yet).
    private func declaredTextEncoding() -> TextEncoding? {
        guard case .success(let page1) = source.page(1) else { return nil }
        return TextEncoding(header: page1)
    }
}
