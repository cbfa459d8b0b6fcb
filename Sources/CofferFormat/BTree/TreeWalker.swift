// TreeWalker — visits every page of one B-tree, from its root, defensively.
//
// Rules (why each one exists):
// - A visited set shared by all walks of a salvage: a child pointer to an already-visited page is a cycle or
//   a cross-link between trees, and is not followed (each page belongs to at most one tree).
// - Every page of a tree has the same kind as its root (table vs index): a child pointer to a page of the
//   other kind is corrupt, and that page is left for the page it really belongs to.
// - Table trees carry rowid bounds: an interior cell (child, K) means every rowid under child is ≤ K and
//   greater than the previous cell's key. A leaf holding a rowid outside its bounds was reached through a
//   corrupt pointer and is rejected (not marked visited, so its real owner or the orphan scan can take it).
// - Depth is capped at 40 (SQLite itself stops at 20).
// - An unreadable page (bad HMAC) is marked visited and reported; nothing below it is reachable from here.
// - A child past the end of a truncated file is skipped alone; its parent and siblings are still used
//   (pages are parsed against `maxPage`, which allows pointers up to the size the header claims).

/// Counts from one tree walk.
public struct WalkStatistics: Sendable, Equatable {
    /// Pages accepted and visited.
    public var pagesVisited = 0
    /// Pages that could not be read (bad HMAC, I/O).
    public var pagesUnreadable = 0
    /// Pages that were read but rejected (bad header, bad cell, wrong kind, rowid out of bounds).
    public var pagesRejected = 0
    /// Leaves used in part: damaged in a cell pointer, a cell header or a key, they gave the cells that still
    /// stand (see ``BTreePage/standingCells(maxPayload:maxPage:)``).
    public var leavesPartlyUsed = 0
    /// The page numbers that could not be read, in the order met.
    public var unreadablePages: [UInt32] = []
    /// The key ranges (low, high] of subtrees that could not be used (unreadable, rejected, cross-linked or
    /// past the end): nil bounds are open. For table trees the bounds are rowids; for index trees they are
    /// always open (only the fact that something is missing is known). A walk that used every page has none.
    public var holes: [KeyRange] = []

    /// Empty statistics.
    public init() {}
}

/// A rowid interval (low, high]; a nil bound is open.
public struct KeyRange: Sendable, Equatable {
    /// Exclusive lower bound.
    public var low: Int64?
    /// Inclusive upper bound.
    public var high: Int64?

    /// Whether every key of [first, last] lies inside the range.
    public func contains(first: Int64, last: Int64) -> Bool {
        (low.map { first > $0 } ?? true) && (high.map { last <= $0 } ?? true)
    }
}

/// Walks B-trees over a ``PageSource``.
public struct TreeWalker {
    /// The page source.
    public let source: PageSource
    /// Upper bound on any payload size: the file's total usable bytes.
    public let maxPayload: Int

    /// Upper bound on child and overflow page numbers: the larger of the file's real page count and the
    /// size page 1's header claims (offset 28). A truncated file keeps intact pages that point past its new
    /// end; those pointers are plausible (the header says the file was that long), so the page is kept and
    /// only the missing child or chain is lost. The claim is capped at SQLite's 2^30 pages.
    public let maxPage: UInt32

    /// Creates a walker.
    public init(source: PageSource) {
        self.source = source
        var claimed: UInt32 = 0
        if source.pageCount >= 1, case .success(let page1) = source.page(1), let size = ByteView(page1).u32(28),
            size <= 1 << 30
        {
            claimed = size
        }
        maxPage = max(source.pageCount, claimed)
        let total = Int(maxPage).multipliedReportingOverflow(by: source.usableSize)
        maxPayload = total.overflow ? Int(Int32.max) : min(total.partialValue, Int(Int32.max))
    }

    /// Reads and parses page `pageNumber` as a B-tree page with all its cells, or says why not.
    public func parse(_ pageNumber: UInt32) -> Result<(page: BTreePage, cells: [BTreeCell]), WalkFailure> {
        guard case .success(let bytes) = source.page(pageNumber) else { return .failure(.unreadable) }
        return parse(bytes: bytes, pageNumber: pageNumber)
    }

    /// Parses already-read plaintext page bytes as a B-tree page with all its cells.
    public func parse(bytes: [UInt8], pageNumber: UInt32) -> Result<(page: BTreePage, cells: [BTreeCell]), WalkFailure> {
        guard let page = BTreePage(bytes: bytes, pageNumber: pageNumber, usableSize: source.usableSize),
            let cells = page.cells(maxPayload: maxPayload, maxPage: maxPage)
        else { return .failure(.malformed) }
        return .success((page, cells))
    }

    /// Walks the tree rooted at `root`, calling `visit` for every accepted page (interior pages before their
    /// children, children in key order). Pages in `visited` are skipped; accepted and unreadable pages are
    /// added to it; unreadable ones are listed in the returned statistics. `expectTable`, when given,
    /// is the kind the root must have (true: table B-tree, false: index B-tree): a schema entry whose root
    /// points at a B-tree of the other kind is corrupt, and that tree is left to its real owner.
    @discardableResult
    public func walk(
        root: UInt32, visited: inout Set<UInt32>, expectTable: Bool? = nil,
        visit: (BTreePage, [BTreeCell]) throws -> Void
    ) rethrows -> WalkStatistics {
        var stats = WalkStatistics()
        struct Pending {
            let page: UInt32
            let depth: Int
            let low: Int64?
            let high: Int64?
        }
        var stack = [Pending(page: root, depth: 0, low: nil, high: nil)]
        var isTable = expectTable
        while let next = stack.popLast() {
            let hole = KeyRange(low: next.low, high: next.high)
            guard next.page >= 1, next.page <= source.pageCount, next.depth <= 40,
                !visited.contains(next.page)
            else {
                stats.holes.append(hole)
                continue
            }
            guard case .success(let bytes) = source.page(next.page) else {
                visited.insert(next.page)
                stats.pagesUnreadable += 1
                stats.unreadablePages.append(next.page)
                stats.holes.append(hole)
                continue
            }
            var parsed: (page: BTreePage, cells: [BTreeCell])
            switch parse(bytes: bytes, pageNumber: next.page) {
            case .failure:
                // A leaf its parent points at, damaged in a cell pointer or header: the cells that stand alone.
                guard
                    let standing = standingLeaf(
                        bytes: bytes, pageNumber: next.page, isTable: isTable, low: next.low, high: next.high)
                else {
                    stats.pagesRejected += 1
                    stats.holes.append(hole)
                    continue
                }
                parsed = standing
                stats.leavesPartlyUsed += 1
            case .success(let value):
                parsed = value
            }
            let type = parsed.page.type
            if let isTable, isTable != type.isTable {
                stats.pagesRejected += 1
                stats.holes.append(hole)
                continue
            }
            if type.isTable, !TreeWalker.keysWithin(parsed.cells, low: next.low, high: next.high) {
                // A damaged key: a leaf keeps its cells in key order within bounds, an interior page is refused.
                let ordered = type.isLeaf ? Self.longestOrderedRun(parsed.cells, low: next.low, high: next.high) : []
                guard 2 * ordered.count >= parsed.cells.count, !ordered.isEmpty else {
                    stats.pagesRejected += 1
                    stats.holes.append(hole)
                    continue
                }
                parsed.cells = ordered
                stats.leavesPartlyUsed += 1
            }
            isTable = type.isTable
            visited.insert(next.page)
            stats.pagesVisited += 1
            try visit(parsed.page, parsed.cells)
            guard !type.isLeaf, let right = parsed.page.header.rightChild else { continue }
            // Children in key order: push right-most first so the left-most is popped first.
            var children: [Pending] = []
            var low = next.low
            for cell in parsed.cells {
                guard let child = cell.leftChild else { continue }
                children.append(Pending(page: child, depth: next.depth + 1, low: low, high: cell.rowid ?? next.high))
                if let key = cell.rowid { low = key }
            }
            children.append(Pending(page: right, depth: next.depth + 1, low: low, high: next.high))
            stack.append(contentsOf: children.reversed())
        }
        return stats
    }

    /// A leaf whose bytes ``parse(bytes:pageNumber:)`` refuses, read with ``BTreePage/standingCells(maxPayload:maxPage:)``: its table
    /// cells kept in key order within (low, high] (``longestOrderedRun(_:low:high:)``). Nil unless the page is a
    /// leaf of the expected kind and at least half of its cells stand: less, and it is more likely another
    /// page than this leaf.
    func standingLeaf(
        bytes: [UInt8], pageNumber: UInt32, isTable: Bool?, low: Int64?, high: Int64?
    ) -> (page: BTreePage, cells: [BTreeCell])? {
        guard let page = BTreePage(bytes: bytes, pageNumber: pageNumber, usableSize: source.usableSize),
            isTable.map({ $0 == page.type.isTable }) ?? true,
            var cells = page.standingCells(maxPayload: maxPayload, maxPage: maxPage)
        else { return nil }
        if page.type.isTable { cells = Self.longestOrderedRun(cells, low: low, high: high) }
        guard !cells.isEmpty, 2 * cells.count >= page.header.cellCount else { return nil }
        return (page, cells)
    }

    /// The longest subsequence of `cells` whose keys lie in (low, high] and strictly increase: a leaf's
    /// cells with one damaged key drop that cell only.
    static func longestOrderedRun(_ cells: [BTreeCell], low: Int64?, high: Int64?) -> [BTreeCell] {
        let candidates = cells.filter { cell in
            guard let key = cell.rowid else { return false }
            return (low.map { key > $0 } ?? true) && (high.map { key <= $0 } ?? true)
        }
        // Patience sorting: tails[k] is the index of the smallest last key of an increasing run of length k+1.
        var tails: [Int] = []
        var previous = [Int?](repeating: nil, count: candidates.count)
        for (index, cell) in candidates.enumerated() {
            let key = cell.rowid ?? 0
            var lower = 0
            var upper = tails.count
            while lower < upper {
                let middle = (lower + upper) / 2
                if (candidates[tails[middle]].rowid ?? 0) < key { lower = middle + 1 } else { upper = middle }
            }
            previous[index] = lower > 0 ? tails[lower - 1] : nil
            if lower == tails.count { tails.append(index) } else { tails[lower] = index }
        }
        var run: [BTreeCell] = []
        var cursor = tails.last
        while let index = cursor {
            run.append(candidates[index])
            cursor = previous[index]
        }
        return run.reversed()
    }

    /// Whether every key of a table page lies in (low, high] and keys are strictly increasing.
    static func keysWithin(_ cells: [BTreeCell], low: Int64?, high: Int64?) -> Bool {
        var previous = low
        for cell in cells {
            guard let key = cell.rowid else { return false }
            if let previous, key <= previous { return false }
            if let high, key > high { return false }
            previous = key
        }
        return true
    }
}

/// Why a page could not be used as a B-tree page.
public enum WalkFailure: Error, Sendable {
    /// The page could not be read (bad HMAC, I/O, out of range).
    case unreadable
    /// The page was read but is not a well-formed B-tree page.
    case malformed
}
