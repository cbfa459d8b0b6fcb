// PageRoles — what every page of a file is for, and which table or index owns it.
//
// Roles come from reachability, not from guessing at page contents:
// 1. page 1 is the header (and the root of sqlite_master);
// 2. every table and index root in sqlite_master is walked (TreeWalker), each accepted page taking the
//    role of its B-tree page type and the entry's name as owner; overflow chains of every cell are followed
//    strictly and their pages become `.overflow` with the same owner;
// 3. the freelist is walked from header offset 32 (trunk: next trunk, leaf count, leaf page numbers), with
//    a visited set and a leaf count bounded by (U/4 − 2);
// 4. pointer-map pages (auto-vacuum files: header offset 52 ≠ 0) are page 2 and every (U/5 + 1)-th page
//    after it; the lock-byte page is 2^30 / P + 1;
// 5. every remaining page is read once: unreadable (bad HMAC) pages are `.unreadable`; a page that parses as
//    a B-tree page gets its type's role with no owner (an orphan); anything else is `.unknown`;
// 6. the overflow chains of those orphans' cells are followed strictly, as repair follows them when it
//    adopts a leaf: a page of no other kind on one is `.overflow`, unreached and unowned. Without this an
//    intact overflow page under a lost interior page (its first bytes are a page number, no B-tree page
//    type) was `.unknown`, which the page map drew as unparseable while repair salvaged its bytes (#38).

/// The role of one page.
public enum PageRole: String, Sendable, Codable, CaseIterable {
    /// Page 1: the database header and the root of sqlite_master.
    case header
    /// An interior page of a table B-tree.
    case tableInterior
    /// A leaf page of a table B-tree.
    case tableLeaf
    /// An interior page of an index (or WITHOUT ROWID table) B-tree.
    case indexInterior
    /// A leaf page of an index (or WITHOUT ROWID table) B-tree.
    case indexLeaf
    /// An overflow page.
    case overflow
    /// A freelist trunk page.
    case freelistTrunk
    /// A freelist leaf page.
    case freelistLeaf
    /// A pointer-map page (auto-vacuum).
    case pointerMap
    /// The lock-byte page (never used for data).
    case lockByte
    /// The page failed authentication (bad HMAC) or could not be read.
    case unreadable
    /// Anything else (zeroed, garbage, or an unreferenced page of no recognizable kind).
    case unknown

    init(_ type: BTreePageType) {
        switch type {
        case .tableInterior: self = .tableInterior
        case .tableLeaf: self = .tableLeaf
        case .indexInterior: self = .indexInterior
        case .indexLeaf: self = .indexLeaf
        }
    }
}

/// The role and owner of one page.
public struct PageInfo: Sendable, Codable, Equatable {
    /// The page number (1-based).
    public var pageNumber: UInt32
    /// Its role.
    public var role: PageRole
    /// The table or index that owns it ("sqlite_master" for the schema tree), or nil if unattributed.
    public var owner: String?
    /// Whether the owner is a table (including sqlite_master) or an index; nil when there is no owner.
    public var ownerKind: SchemaEntryKind?
    /// Whether the page was reached from a root, the freelist or an overflow chain (false for orphans and the
    /// overflow pages of their cells).
    public var reachable: Bool
}

/// Classifies every page of a file.
///
/// ```swift
/// let file = try DatabaseFile(path: "app.db", key: .passphrase("secret"))
/// for info in PageRoles.classify(file) where info.role == .tableLeaf { print(info.pageNumber, info.owner ?? "?") }
/// ```
public enum PageRoles {
    /// Returns one ``PageInfo`` per page, in page order (1…pageCount).
    public static func classify(_ source: PageSource) -> [PageInfo] {
        let count = Int(source.pageCount)
        var infos = (0..<count).map {
            PageInfo(pageNumber: UInt32($0 + 1), role: .unknown, owner: nil, ownerKind: nil, reachable: false)
        }
        var kinds: [String: SchemaEntryKind] = ["sqlite_master": .table]
        func set(_ page: UInt32, _ role: PageRole, _ owner: String?) {
            guard page >= 1, Int(page) <= count else { return }
            infos[Int(page) - 1] = PageInfo(
                pageNumber: page, role: role, owner: owner, ownerKind: owner.flatMap { kinds[$0] }, reachable: true)
        }
        var visited = Set<UInt32>()
        let walker = TreeWalker(source: source)
        let overflow = OverflowReader(source: source)
        var roots: [(UInt32, String, Bool?)] = [(1, "sqlite_master", true)]
        var schemaVisited = Set<UInt32>()
        let schema = Schema.read(from: source, visited: &schemaVisited)
        let withoutRowid = Set(schema.tables.filter(\.withoutRowid).map(\.name))
        for entry in schema.entries where entry.rootPage >= 2 { kinds[entry.name] = entry.kind }
        roots += schema.entries.filter { $0.rootPage >= 2 }.map { entry in
            let isTable: Bool? = entry.kind == .index ? false : (withoutRowid.contains(entry.name) ? false : true)
            return (entry.rootPage, entry.name, isTable)
        }
        var chainPages = Set<UInt32>()
        for (root, owner, isTable) in roots {
            visited.formUnion(chainPages)
            let stats = walker.walk(root: root, visited: &visited, expectTable: isTable) { page, cells in
                set(page.pageNumber, page.pageNumber == 1 ? .header : PageRole(page.type), owner)
                for cell in cells {
                    guard let first = cell.overflowPage,
                        case .success(let chain) = overflow.read(
                            first: first, remaining: cell.payloadSize - cell.localPayload.count)
                    else { continue }
                    for page in chain.pages {
                        set(page, .overflow, owner)
                        chainPages.insert(page)
                    }
                }
            }
            for page in stats.unreadablePages { set(page, .unreadable, owner) }
        }
        visited.formUnion(chainPages)
        if count >= 1, infos[0].role != .header {
            infos[0].role = source.page(1).isSuccess ? .header : .unreadable
            infos[0].owner = "sqlite_master"
            infos[0].ownerKind = .table
        }
        if case .success(let page1) = source.page(1) {
            let header = ByteView(page1)
            for (page, role) in freelist(source: source, header: header) where !visited.contains(page) {
                set(page, role, nil)
                visited.insert(page)
            }
            for page in pointerMapPages(source: source, header: header) where !visited.contains(page) {
                set(page, .pointerMap, nil)
                visited.insert(page)
            }
        }
        let lockByte = DatabaseHeader.lockBytePage(pageSize: source.pageSize)
        if Int(lockByte) <= count, !visited.contains(lockByte) {
            set(lockByte, .lockByte, nil)
            visited.insert(lockByte)
        }
        var orphanChains: [(first: UInt32, remaining: Int)] = []
        for index in 0..<count where !visited.contains(UInt32(index + 1)) && infos[index].role == .unknown {
            let page = UInt32(index + 1)
            switch walker.parse(page) {
            case .failure(.unreadable): infos[index].role = .unreadable
            case .failure(.malformed): infos[index].role = .unknown
            case .success(let parsed):
                infos[index].role = page == 1 ? .header : PageRole(parsed.page.type)
                orphanChains += parsed.cells.compactMap(chainStart)
            }
        }
        for page in Self.chainPages(orphanChains, overflow: overflow) where infos[Int(page) - 1].role == .unknown {
            infos[Int(page) - 1].role = .overflow
        }
        return infos
    }

    /// Where `cell`'s overflow chain starts and how many payload bytes it holds; nil without a chain.
    static func chainStart(_ cell: BTreeCell) -> (first: UInt32, remaining: Int)? {
        cell.overflowPage.map { ($0, cell.payloadSize - cell.localPayload.count) }
    }

    /// The pages of `chains` (cells of pages no tree reaches) that read whole, in the order met. A chain
    /// that breaks (unreadable page, wrong length, loop) claims no page, as in repair (OverflowReader).
    static func chainPages(_ chains: [(first: UInt32, remaining: Int)], overflow: OverflowReader) -> [UInt32] {
        chains.flatMap { chain -> [UInt32] in
            guard case .success(let read) = overflow.read(first: chain.first, remaining: chain.remaining) else { return [] }
            return read.pages
        }
    }

    /// The pointer-map pages of an auto-vacuum file (header offset 52 ≠ 0): page 2 and every (U/5 + 1)-th
    /// page after it. Empty for other files.
    public static func pointerMapPages(source: PageSource, header: ByteView) -> [UInt32] {
        guard let largestRoot = header.u32(52), largestRoot != 0, source.usableSize >= 5 else { return [] }
        let step = source.usableSize / 5 + 1
        return Array(stride(from: UInt32(2), through: max(2, source.pageCount), by: step))
            .filter { $0 <= source.pageCount }
    }

    /// The freelist pages reachable from the header, each with its role. Bounded and cycle-guarded.
    public static func freelist(source: PageSource, header: ByteView) -> [(UInt32, PageRole)] {
        var result: [(UInt32, PageRole)] = []
        var seen = Set<UInt32>()
        var trunk = header.u32(32) ?? 0
        let maxLeaves = source.usableSize / 4 - 2
        while trunk >= 2, trunk <= source.pageCount, seen.insert(trunk).inserted {
            guard case .success(let bytes) = source.page(trunk) else { break }
            result.append((trunk, .freelistTrunk))
            let view = ByteView(bytes)
            guard let next = view.u32(0), let leafCount = view.u32(4), Int(leafCount) <= maxLeaves else { break }
            for index in 0..<Int(leafCount) {
                guard let leaf = view.u32(8 + 4 * index), leaf >= 2, leaf <= source.pageCount,
                    seen.insert(leaf).inserted
                else { continue }
                result.append((leaf, .freelistLeaf))
            }
            trunk = next
        }
        return result
    }
}
