// RowPlacement — where every row of a pristine file lives: the page holding its cell and the pages of its
// overflow chain. With a DamageReport this gives the physical bound: the rows whose every page is intact,
// which a repair must give back.
//
// The walk uses CofferRepair's page and cell parser (TreeWalker, OverflowReader, RecordDecoder) on a file
// that is expected to be pristine; callers check its result against the real SQLite library (every row the
// library returns must be placed exactly once), so a parser bug cannot silently shrink the bound.
// Rowid tables: cells of table leaves. WITHOUT ROWID tables are index B-trees and keep rows in interior
// cells too, so every cell is a row. Internal sqlite_* tables are skipped (repair rebuilds them).

import CofferRepair

/// One row of a pristine file and the pages it occupies.
public struct PlacedRow: Sendable, Hashable {
    /// The table name.
    public var table: String
    /// The rowid, for rowid tables.
    public var rowid: Int64?
    /// The record's fields as stored (an INTEGER PRIMARY KEY field is NULL, whole REALs may be integers).
    public var record: [SalvagedValue]
    /// The key identifying the row: `[rowid]`, or the PRIMARY KEY fields of a WITHOUT ROWID table.
    public var key: [SalvagedValue]
    /// The page holding the cell, then its overflow pages.
    public var pages: [UInt32]

    /// The row as a raw signature: rowid (when any) followed by the stored fields. Repair output of inferred
    /// tables and `.recover`'s lost_and_found have this shape.
    public var rawSignature: [SalvagedValue] { (rowid.map { [SalvagedValue.integer($0)] } ?? []) + record }
}

/// Walks every table of a pristine file.
public enum RowPlacement {
    /// The tables read from sqlite_master and every row placed, in table then key order. Rows whose cell or
    /// overflow chain cannot be read are not returned (a pristine file has none).
    public static func rows(in source: PageSource) -> (tables: [TableDescription], rows: [PlacedRow]) {
        var visited = Set<UInt32>()
        let schema = Schema.read(from: source, visited: &visited)
        let walker = TreeWalker(source: source)
        let overflow = OverflowReader(source: source)
        var placed: [PlacedRow] = []
        let tables = schema.tables.filter { !$0.name.lowercased().hasPrefix("sqlite_") && !$0.isInferred }
        for table in tables {
            var seen = visited
            walker.walk(root: table.rootPage, visited: &seen) { page, cells in
                guard table.withoutRowid || page.type == .tableLeaf else { return }
                for cell in cells {
                    var payload = cell.localPayload
                    var pages = [page.pageNumber]
                    if let first = cell.overflowPage {
                        guard case .success(let chain) = overflow.read(first: first, remaining: cell.payloadSize - payload.count)
                        else { continue }
                        payload += chain.bytes
                        pages += chain.pages
                    }
                    guard let fields = RecordDecoder.decode(payload) else { continue }
                    let key =
                        cell.rowid.map { [SalvagedValue.integer($0)] }
                        ?? Array(fields.prefix(table.primaryKeyColumns.count))
                    placed.append(PlacedRow(table: table.name, rowid: cell.rowid, record: fields, key: key, pages: pages))
                }
            }
        }
        return (tables, placed)
    }

    /// The rows all of whose pages are intact after `damage`.
    public static func physicalBound(_ rows: [PlacedRow], damage: DamageReport) -> [PlacedRow] {
        rows.filter { $0.pages.allSatisfy(damage.isIntact) }
    }
}
