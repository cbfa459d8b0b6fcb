// StatisticsCollector — walks every table and index of a file through the page decoder and adds up its
// space (definitions: DatabaseStatistics.swift). The linked SQLCipher 3.4.1 is built without the `dbstat`
// virtual table (`SELECT * FROM dbstat` says "no such table"), so the walk is Coffer's own: TreeWalker
// over the main file overlaid with its committed WAL frames, exactly the database readers see.
//
// Read-only by construction: DatabaseFile, the WAL and the `-shm` are opened for reading and read with
// pread; SQLite never opens the file, so nothing can checkpoint, recover or create a `-shm`.
// Memory: one page at a time, plus the set of claimed page numbers and each tree's leaf order.

import Foundation

/// Computes ``DatabaseStatistics`` for a database file.
///
/// ```swift
/// let file = try DatabaseFile(path: "app.db", key: .passphrase("secret"))
/// let stats = StatisticsCollector.collect(file: file)
/// print(stats.freelistPages, stats.wal.checkpointState)
/// ```
public enum StatisticsCollector {
    /// Walks `file` (overlaid with `walPath`, default `<path>-wal`, when it holds committed frames).
    public static func collect(file: DatabaseFile, walPath: String? = nil) -> DatabaseStatistics {
        let pager = Pager(file: file, walPath: walPath)
        let source = pager.source
        var claimed = Set<UInt32>()
        var schemaVisited = Set<UInt32>()
        let schema = Schema.read(from: source, visited: &schemaVisited)
        let withoutRowid = Set(schema.tables.filter(\.withoutRowid).map(\.name))
        var objects = [ObjectStatistics(name: "sqlite_master", kind: "table", table: "sqlite_master", rootPage: 1)]
        for entry in schema.entries where entry.rootPage >= 2 && (entry.kind == .table || entry.kind == .index) {
            objects.append(
                ObjectStatistics(
                    name: entry.name, kind: entry.kind.rawValue, table: entry.tableName, rootPage: entry.rootPage))
        }
        let walker = TreeWalker(source: source)
        for index in objects.indices {
            let isTable = objects[index].kind == "index" || withoutRowid.contains(objects[index].name) ? false : true
            measure(&objects[index], isTable: isTable, walker: walker, claimed: &claimed)
            objects[index].pages = objects[index].interiorPages + objects[index].leafPages + objects[index].overflowPages
            objects[index].bytes = objects[index].pages * source.pageSize
        }
        var freelist = 0
        var pointerMap = 0
        var autoVacuum = "none"
        if case .success(let page1) = source.page(1) {
            let header = ByteView(page1)
            for (page, _) in PageRoles.freelist(source: source, header: header) where claimed.insert(page).inserted {
                freelist += 1
            }
            for page in PageRoles.pointerMapPages(source: source, header: header) where claimed.insert(page).inserted {
                pointerMap += 1
            }
            if let largestRoot = header.u32(52), largestRoot != 0 {
                autoVacuum = (header.u32(64) ?? 0) != 0 ? "incremental" : "full"
            }
        }
        let lockByte = DatabaseHeader.lockBytePage(pageSize: source.pageSize)
        if lockByte <= source.pageCount { claimed.insert(lockByte) }
        return DatabaseStatistics(
            path: file.path, fileSize: file.fileSize, pageSize: source.pageSize,
            reservedBytes: source.pageSize - source.usableSize, pageCount: Int(source.pageCount),
            freelistPages: freelist, pointerMapPages: pointerMap, autoVacuum: autoVacuum,
            unclaimedPages: Int(source.pageCount) - claimed.count(where: { $0 <= source.pageCount }), objects: objects,
            wal: WALStatisticsReader.read(walPath: walPath ?? file.path + "-wal", pageSize: source.pageSize))
    }

    /// Walks one tree, adding its pages, entries, payload, unused bytes and leaf order into `object`.
    static func measure(
        _ object: inout ObjectStatistics, isTable: Bool, walker: TreeWalker, claimed: inout Set<UInt32>
    ) {
        var leaves: [UInt32] = []
        var chains: [(first: UInt32, remaining: Int)] = []
        let walk = walker.walk(root: object.rootPage, visited: &claimed, expectTable: isTable) { page, cells in
            if page.type.isLeaf {
                object.leafPages += 1
                leaves.append(page.pageNumber)
            } else {
                object.interiorPages += 1
            }
            // A table's rows are its leaf cells; an index keeps entries in interior cells too.
            if page.type.isLeaf || !page.type.isTable { object.rows += cells.count }
            object.unusedBytes += unusedBytes(page)
            for cell in cells {
                object.payloadBytes += cell.payloadSize
                if let first = cell.overflowPage { chains.append((first, cell.payloadSize - cell.localPayload.count)) }
            }
        }
        object.unreadablePages += walk.pagesUnreadable + walk.pagesRejected
        for chain in chains {
            measureChain(first: chain.first, remaining: chain.remaining, into: &object, walker: walker, claimed: &claimed)
        }
        var gaps = 0
        for (previous, next) in zip(leaves, leaves.dropFirst()) where next != previous + 1 { gaps += 1 }
        object.fragmentation = leaves.count > 1 ? Double(gaps) / Double(leaves.count - 1) : 0
    }

    /// Follows one overflow chain page by page (next pointer in bytes 0–3), without copying its payload.
    static func measureChain(
        first: UInt32, remaining: Int, into object: inout ObjectStatistics, walker: TreeWalker,
        claimed: inout Set<UInt32>
    ) {
        let source = walker.source
        let chunk = source.usableSize - 4
        guard chunk > 0, remaining > 0 else { return }
        let needed = (remaining + chunk - 1) / chunk
        var current = first
        for _ in 0..<needed {
            guard current >= 2, current <= source.pageCount, claimed.insert(current).inserted else { return }
            guard case .success(let bytes) = source.page(current), let next = ByteView(bytes).u32(0) else {
                object.unreadablePages += 1
                return
            }
            object.overflowPages += 1
            current = next
        }
        object.unusedBytes += needed * chunk - remaining
    }

    /// Bytes of a B-tree page that hold nothing: the gap between the cell-pointer array and the cell
    /// content, every freeblock (a chain of [next offset (2), size (2)] in increasing offsets), and the
    /// fragmented bytes counted in header byte 7.
    static func unusedBytes(_ page: BTreePage) -> Int {
        let header = page.header
        let pointerEnd = header.cellPointerOffset + 2 * header.cellCount
        var unused = max(0, min(header.cellContentStart, page.usableSize) - pointerEnd)
        unused += Int(page.view.u8(header.headerOffset + 7) ?? 0)
        var offset = header.firstFreeblock
        var steps = 0
        while offset != 0, steps < page.usableSize / 4, let next = page.view.u16(offset),
            let size = page.view.u16(offset + 2)
        {
            unused += Int(size)
            guard Int(next) == 0 || Int(next) > offset else { break }
            offset = Int(next)
            steps += 1
        }
        return unused
    }
}
