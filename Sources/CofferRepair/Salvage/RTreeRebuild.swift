// RTreeRebuild — an R*Tree whose nodes were lost is rebuilt from the leaf cells that survive.
//
// An R*Tree keeps its entries only in its `_node` shadow table: each node is a blob (2-byte depth, read on
// the root only; 2-byte cell count; cells of an 8-byte rowid and 2 × dimensions coordinates of 4 bytes,
// big-endian: float32, or int32 for rtree_i32). In a leaf the rowid is an entry's; in an interior node it
// is a child node's number. `_rowid` maps each entry to its leaf, `_parent` each node to its parent.
//
// After the shadow rows are restored, a full scan of the R*Tree must see exactly the entries `_rowid`
// lists. When it fails (a missing node is "malformed") or disagrees, the index is rebuilt: the leaves are
// the nodes `_rowid` names, the root when its depth is 0, and — as `_rowid` may have lost rows too — any
// other node that `_parent` names as no one's parent and whose cells do not all name nodes; each leaf cell
// that `_rowid` does not place in another leaf is an entry, and the virtual table is dropped, created again
// and filled with those entries. A float
// coordinate read back from its float32 is stored unchanged by SQLite's rounding, so the boxes are exact.

import Coffer

extension RepairWriter {
    /// Checks the restored R*Tree `virtual`; rebuilds it from its surviving leaves when it is inconsistent.
    func checkRTree(_ virtual: VirtualTableDescription) throws {
        let name = SQLIdentifier.quote(virtual.name)
        let rowidTable = SQLIdentifier.quote(virtual.name + "_rowid")
        let consistent = try? database.write { connection -> Bool in
            let scanned = try connection.fetchValue(Int.self, sql: "SELECT count(*) FROM \(name)")
            let mapped = try connection.fetchValue(Int.self, sql: "SELECT count(*) FROM \(rowidTable)")
            return scanned == mapped
        }
        guard consistent != true else { return }
        do {
            let count = try database.write { connection in try rebuildRTree(virtual, connection: connection) }
            outcome.issues.append(
                SchemaIssue(
                    kind: "virtual table", name: virtual.name,
                    reason: "R*Tree nodes lost or inconsistent; rebuilt from the \(count) entries of its surviving leaves"))
        } catch let error as CofferError where RepairWriter.outputFailed(error) {
            throw error
        } catch {
            fail(kind: "virtual table", name: virtual.name, reason: "R*Tree inconsistent and not rebuilt (\(Self.reason(error)))")
        }
    }

    /// Reads the surviving leaf cells, recreates the R*Tree and inserts them; returns how many went in.
    private func rebuildRTree(_ virtual: VirtualTableDescription, connection: Connection) throws -> Int {
        let name = SQLIdentifier.quote(virtual.name)
        let columns = try connection.fetchAll(sql: "PRAGMA table_info(\(name))").count
        let dimensions = (columns - 1) / 2
        guard dimensions >= 1 else { throw CofferError(code: .corrupt, message: "no coordinates") }
        var leafOf: [Int64: Int64] = [:]
        try connection.forEachRow(sql: "SELECT rowid, nodeno FROM \(SQLIdentifier.quote(virtual.name + "_rowid"))") {
            leafOf[$0.int64(at: 0)] = $0.int64(at: 1)
        }
        var parentOf: [Int64: Int64] = [:]
        try connection.forEachRow(sql: "SELECT nodeno, parentnode FROM \(SQLIdentifier.quote(virtual.name + "_parent"))") {
            parentOf[$0.int64(at: 0)] = $0.int64(at: 1)
        }
        var nodes: [(number: Int64, data: [UInt8])] = []
        try connection.forEachRow(sql: "SELECT nodeno, data FROM \(SQLIdentifier.quote(virtual.name + "_node"))") {
            nodes.append(($0.int64(at: 0), $0.bytes(at: 1)))
        }
        let integer = virtual.module == "rtree_i32"
        let named = Set(leafOf.values)
        let interior = Set(parentOf.values)
        let nodeNumbers = Set(nodes.map(\.number)).union(parentOf.keys)
        var entries: [Int64: [Double]] = [:]
        for node in nodes {
            let cells = Self.cells(of: node.data, dimensions: dimensions, integer: integer)
            let depth = node.data.count >= 2 ? Int(node.data[0]) << 8 | Int(node.data[1]) : -1
            // A leaf: named by `_rowid`, a root of depth 0, or (when those rows were lost too) a node that is
            // no one's parent and whose cells do not all name nodes.
            let isLeaf =
                named.contains(node.number) || (node.number == 1 && depth == 0)
                || (node.number != 1 && !interior.contains(node.number) && !cells.allSatisfy { nodeNumbers.contains($0.0) })
            guard isLeaf else { continue }
            // A cell `_rowid` places in another leaf is a stale copy.
            for (rowid, box) in cells where leafOf[rowid] == nil || leafOf[rowid] == node.number {
                entries[rowid] = box
            }
        }
        try connection.execute(sql: "DROP TABLE \(name)")
        try UntrustedCreate(kind: .virtualTable, name: virtual.name, table: virtual.name, sql: virtual.sql).run(on: connection)
        let insert = try connection.makeStatement(
            sql: "INSERT INTO \(name) VALUES (" + Array(repeating: "?", count: columns).joined(separator: ", ") + ")")
        for (rowid, box) in entries.sorted(by: { $0.key < $1.key }) {
            try insert.bind(.integer(rowid), toParameter: 1)
            for (index, value) in box.enumerated() { try insert.bind(.real(value), toParameter: index + 2) }
            while try insert.step() {}
            insert.reset()
        }
        return entries.count
    }

    /// The cells of one node blob: rowid and coordinates.
    static func cells(of data: [UInt8], dimensions: Int, integer: Bool) -> [(Int64, [Double])] {
        guard data.count >= 4 else { return [] }
        let count = Int(data[2]) << 8 | Int(data[3])
        let size = 8 + 8 * dimensions
        var cells: [(Int64, [Double])] = []
        for cell in 0..<count {
            let start = 4 + cell * size
            guard start + size <= data.count else { break }
            let rowid = data[start..<(start + 8)].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            let box = (0..<(2 * dimensions)).map { coordinate -> Double in
                let at = start + 8 + 4 * coordinate
                let bits = data[at..<(at + 4)].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
                return integer ? Double(Int32(bitPattern: bits)) : Double(Float(bitPattern: bits))
            }
            cells.append((Int64(bitPattern: rowid), box))
        }
        return cells
    }
}
