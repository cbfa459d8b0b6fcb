// Salvager+Roots — with no schema at all (page 1 lost, no backup material), every table B-tree that
// survives is brought back as a table of its own.
//
// Without sqlite_master nothing names the tables, but their trees still hang together: a root is a table
// page (interior or leaf) that no table interior page points to. Each root's tree is walked exactly as a
// named table's would be and its rows go to `recovered_root_<page>`: `id INTEGER PRIMARY KEY`, the rowid,
// then inferred columns `c1…` (as many as its widest record, BLOB affinity: values stay exactly as stored,
// except that a first field NULL in every record of the tree is the INTEGER PRIMARY KEY alias, SQLite's
// stored NULL, and reads the rowid as it did in the lost table). Rows of two tables are never merged, even
// when the tables have the same shape and share rowids (grouping leaves by shape would merge them, and the
// rowid deduplication would then drop one table's rows). Leaves that no surviving interior page reaches
// (their parent is damaged) are left to the orphan scan, which groups them by shape.
// Free pages are claimed before this runs (FreePages.scanTrunks), so a dropped table's freed tree is not
// taken for a live one where its trunk survives.

import Foundation

extension Salvager {
    /// Walks every unclaimed table tree from its root into a `recovered_root_<page>` table.
    func salvageRootlessTrees<Sink: SalvageSink>(
        schema: inout Schema, walker: TreeWalker, overflow: OverflowReader, checkText: Bool, sink: inout Sink
    ) throws {
        var children = Set<UInt32>()
        var interiors: [UInt32] = []
        var leaves: [UInt32] = []
        for pageNumber in 1...max(1, source.pageCount) where source.pageCount >= 1 && !claimed.contains(pageNumber) {
            guard case .success(let parsed) = walker.parse(pageNumber), parsed.page.type.isTable else { continue }
            if parsed.page.type == .tableInterior {
                children.formUnion(parsed.cells.compactMap(\.leftChild))
                if let right = parsed.page.header.rightChild { children.insert(right) }
                interiors.append(pageNumber)
            } else if !parsed.cells.isEmpty {
                leaves.append(pageNumber)
            }
        }
        // A leaf no interior page points to is a one-page table. Interior roots are walked first.
        for root in (interiors + leaves) where !children.contains(root) && !claimed.contains(root) {
            var probe = claimed
            var width = 0
            var firstFieldAlwaysNull = true
            walker.walk(root: root, visited: &probe, expectTable: true) { page, cells in
                guard page.type == .tableLeaf else { return }
                for cell in cells {
                    guard let fields = recordFields(cell, overflow: overflow), let first = fields.first else { continue }
                    width = max(width, fields.count)
                    if first != .null { firstFieldAlwaysNull = false }
                }
            }
            guard width > 0 else { continue }
            var table = InferredGrouping.table(
                index: Int(root) - 1, group: .init(fieldCount: width, classes: [], pages: []),
                taken: Set(states.map { $0.table.name.lowercased() }), base: "recovered_root",
                firstFieldIsAlias: firstFieldAlwaysNull)
            table.rootPage = root
            states.append(TableState(table: table))
            schema.tables.append(table)
            try sink.begin(table: table)
            let index = states.count - 1
            var chainPages: [UInt32] = []
            let stats = try walker.walk(root: root, visited: &claimed, expectTable: true) { page, cells in
                tick()
                guard page.type == .tableLeaf else { return }
                try emitTreeCells(
                    cells, tableIndex: index, overflow: overflow, chainPages: &chainPages, checkText: checkText, sink: &sink)
            }
            claimed.formUnion(chainPages)
            states[index].holes = stats.holes
        }
    }

    /// The fields of a cell's record (nil when it does not decode), without counting anything.
    private func recordFields(_ cell: BTreeCell, overflow: OverflowReader) -> [SalvagedValue]? {
        var payload = cell.localPayload
        if let first = cell.overflowPage {
            guard case .success(let chain) = overflow.read(first: first, remaining: cell.payloadSize - payload.count)
            else { return nil }
            payload += chain.bytes
        }
        return RecordDecoder.decode(payload)
    }
}
