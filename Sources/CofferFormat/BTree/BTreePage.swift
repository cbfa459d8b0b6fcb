// BTreePage — the B-tree page header, the cell-pointer array and the four cell layouts.
//
// Page header (at offset 100 on page 1, 0 elsewhere), big-endian:
//   0 type: 0x02 index interior · 0x05 table interior · 0x0a index leaf · 0x0d table leaf
//   1 first freeblock (2) · 3 cell count (2) · 5 cell content start (2, 0 means 65536) ·
//   7 fragmented free bytes (1) · 8 right-most child page (4, interior pages only)
// Then the cell-pointer array: cell count 2-byte offsets from the start of the page.
//
// Cells (U = usable size):
//   table leaf      varint payload size N · varint rowid · local payload · [4-byte first overflow page]
//   table interior  4-byte left child · varint rowid
//   index leaf      varint payload size N · local payload · [4-byte first overflow page]
//   index interior  4-byte left child · then as an index leaf
// Local payload: X = U−35 (table leaf) or ((U−12)·64/255)−23 (index); M = ((U−12)·32/255)−23;
//   K = M + ((N−M) mod (U−4)); local = N if N ≤ X, else K if K ≤ X, else M.
//
// Rejections and why (a page failing any is not used; we never guess around a broken structure):
// - unknown type byte: not a B-tree page (free, overflow, zeroed or garbled).
// - the cell-pointer array runs past the cell content start, or the content start is past U: the cell count
//   or content start is corrupt, so cell offsets cannot be trusted.
// - fragmented bytes > 60: SQLite defragments before that; a larger value is garbage.
// - first freeblock not 0 and not inside [end of pointer array, U−4]: corrupt header.
// - a cell pointer outside [content start, U), or a cell whose bytes extend past U: a corrupt pointer would
//   make us read free space or another cell, which could resurrect deleted data. The whole page is rejected.
// - a payload size larger than the whole file could hold, or a child page 0 / past `maxPage`: impossible.
//   `maxPage` is the larger of the real and the header's page count (TreeWalker), so an intact page of a
//   truncated file is kept: its cut-off child is skipped by the walk and its cut-off overflow chain drops
//   only its own row (OverflowReader), not the page.

/// The four B-tree page types.
public enum BTreePageType: UInt8, Sendable, Codable {
    /// An interior page of an index (or WITHOUT ROWID table) B-tree.
    case indexInterior = 0x02
    /// An interior page of a table B-tree.
    case tableInterior = 0x05
    /// A leaf page of an index (or WITHOUT ROWID table) B-tree.
    case indexLeaf = 0x0a
    /// A leaf page of a table B-tree.
    case tableLeaf = 0x0d

    /// Whether the page is a leaf.
    public var isLeaf: Bool { self == .indexLeaf || self == .tableLeaf }
    /// Whether the page belongs to a table (intkey) B-tree.
    public var isTable: Bool { self == .tableLeaf || self == .tableInterior }
}

/// A validated B-tree page header.
public struct BTreePageHeader: Sendable {
    /// The page type.
    public let type: BTreePageType
    /// Offset of the header in the page (100 on page 1).
    public let headerOffset: Int
    /// First freeblock offset (0 if none).
    public let firstFreeblock: Int
    /// Number of cells.
    public let cellCount: Int
    /// Start of the cell content area.
    public let cellContentStart: Int
    /// The right-most child, for interior pages.
    public let rightChild: UInt32?

    /// Offset of the cell-pointer array.
    public var cellPointerOffset: Int { headerOffset + (type.isLeaf ? 8 : 12) }

    /// Parses and validates the header, or returns `nil` if the page is not a well-formed B-tree page.
    public init?(page: ByteView, pageNumber: UInt32, usableSize: Int) {
        let headerOffset = pageNumber == 1 ? 100 : 0
        guard usableSize >= 480, usableSize <= page.count, let typeByte = page.u8(headerOffset),
            let type = BTreePageType(rawValue: typeByte), let freeblock = page.u16(headerOffset + 1),
            let cells = page.u16(headerOffset + 3), let rawStart = page.u16(headerOffset + 5),
            let fragmented = page.u8(headerOffset + 7)
        else { return nil }
        let contentStart = rawStart == 0 ? 65536 : Int(rawStart)
        let pointerEnd = headerOffset + (type.isLeaf ? 8 : 12) + 2 * Int(cells)
        guard pointerEnd <= usableSize, contentStart <= usableSize, fragmented <= 60 else { return nil }
        guard cells == 0 || pointerEnd <= contentStart else { return nil }
        guard freeblock == 0 || (Int(freeblock) >= pointerEnd && Int(freeblock) <= usableSize - 4) else {
            return nil
        }
        var right: UInt32?
        if !type.isLeaf {
            guard let child = page.u32(headerOffset + 8), child != 0 else { return nil }
            right = child
        }
        self.type = type
        self.headerOffset = headerOffset
        self.firstFreeblock = Int(freeblock)
        self.cellCount = Int(cells)
        self.cellContentStart = contentStart
        self.rightChild = right
    }
}

/// One parsed cell. Fields that a page type does not have are `nil`.
public struct BTreeCell: Sendable {
    /// The left child page (interior pages).
    public let leftChild: UInt32?
    /// The rowid key (table pages).
    public let rowid: Int64?
    /// The total payload size N (0 for table interior cells).
    public let payloadSize: Int
    /// The part of the payload stored on the page.
    public let localPayload: [UInt8]
    /// The first overflow page, when the payload spills.
    public let overflowPage: UInt32?
}

/// Payload split arithmetic for a given usable size.
public struct PayloadLayout: Sendable {
    /// The usable size U.
    public let usableSize: Int

    /// Creates the layout for usable size `usableSize`.
    public init(usableSize: Int) { self.usableSize = usableSize }

    /// How many of `payloadSize` bytes are stored locally in a cell of a page of type `type`.
    /// Returns `payloadSize` unchanged for a usable size below SQLite's minimum (480), where no page parses.
    public func localSize(payloadSize: Int, type: BTreePageType) -> Int {
        guard usableSize >= 480 else { return payloadSize }
        let maxLocal = type.isTable ? usableSize - 35 : ((usableSize - 12) * 64 / 255) - 23
        let minLocal = ((usableSize - 12) * 32 / 255) - 23
        if payloadSize <= maxLocal { return payloadSize }
        let surplus = minLocal + (payloadSize - minLocal) % (usableSize - 4)
        return surplus <= maxLocal ? surplus : minLocal
    }
}

/// A validated B-tree page: header plus bounds-checked access to its cells.
public struct BTreePage: Sendable {
    /// The page number.
    public let pageNumber: UInt32
    /// The validated header.
    public let header: BTreePageHeader
    /// The page bytes.
    public let view: ByteView
    /// The usable size U.
    public let usableSize: Int

    /// Parses `bytes` as a B-tree page, or returns `nil` if the header is invalid.
    public init?(bytes: [UInt8], pageNumber: UInt32, usableSize: Int) {
        let view = ByteView(bytes)
        guard let header = BTreePageHeader(page: view, pageNumber: pageNumber, usableSize: usableSize) else {
            return nil
        }
        self.pageNumber = pageNumber
        self.header = header
        self.view = view
        self.usableSize = usableSize
    }

    /// The page type.
    public var type: BTreePageType { header.type }

    /// Parses every cell. Returns `nil` if any cell pointer or cell is out of bounds (the page is then not
    /// trusted at all). `maxPayload` bounds a plausible payload size (the file's total usable bytes).
    /// `maxPage` bounds child and overflow page numbers.
    public func cells(maxPayload: Int, maxPage: UInt32) -> [BTreeCell]? {
        var result: [BTreeCell] = []
        result.reserveCapacity(header.cellCount)
        let layout = PayloadLayout(usableSize: usableSize)
        for index in 0..<header.cellCount {
            guard let pointer = view.u16(header.cellPointerOffset + 2 * index) else { return nil }
            let offset = Int(pointer)
            guard offset >= header.cellContentStart, offset < usableSize else { return nil }
            guard let parsed = parseCell(at: offset, layout: layout, maxPayload: maxPayload, maxPage: maxPage) else {
                return nil
            }
            result.append(parsed.cell)
        }
        return result
    }

    /// The cells of a damaged leaf that still stand on their own: each pointer in the content area, each cell
    /// parsing within the page, and no two cells sharing a byte (of two that overlap, a damaged pointer made
    /// one up, and neither is kept). Nil for an interior page or an unreadable pointer array. For a leaf its
    /// parent points at but ``cells(maxPayload:maxPage:)`` refuses: a flipped byte in one cell's pointer or
    /// header then costs that cell, not the page (a plaintext page has no checksum to reject it whole).
    public func standingCells(maxPayload: Int, maxPage: UInt32) -> [BTreeCell]? {
        guard type.isLeaf else { return nil }
        let layout = PayloadLayout(usableSize: usableSize)
        var found: [(cell: BTreeCell, start: Int, end: Int)] = []
        for index in 0..<header.cellCount {
            guard let pointer = view.u16(header.cellPointerOffset + 2 * index) else { return nil }
            let offset = Int(pointer)
            guard offset >= header.cellPointerOffset + 2 * header.cellCount, offset < usableSize,
                let parsed = parseCell(at: offset, layout: layout, maxPayload: maxPayload, maxPage: maxPage)
            else { continue }
            found.append((parsed.cell, offset, parsed.end))
        }
        var overlapping = Set<Int>()
        var farthest: Int?  // the cell reaching farthest so far, in start order
        for index in found.indices.sorted(by: { found[$0].start < found[$1].start }) {
            if let farthest, found[index].start < found[farthest].end { overlapping.formUnion([index, farthest]) }
            if farthest.map({ found[index].end > found[$0].end }) ?? true { farthest = index }
        }
        return found.indices.filter { !overlapping.contains($0) }.map { found[$0].cell }
    }

    /// The cell at `start` and the offset just past its last byte.
    private func parseCell(
        at start: Int, layout: PayloadLayout, maxPayload: Int, maxPage: UInt32
    ) -> (cell: BTreeCell, end: Int)? {
        var offset = start
        var leftChild: UInt32?
        if !type.isLeaf {
            guard let child = view.u32(offset), child != 0, child <= maxPage else { return nil }
            leftChild = child
            offset += 4
        }
        if type == .tableInterior {
            guard let (key, length) = Varint.decode(view, at: offset), offset + length <= usableSize else {
                return nil
            }
            let cell = BTreeCell(
                leftChild: leftChild, rowid: Int64(bitPattern: key), payloadSize: 0, localPayload: [],
                overflowPage: nil)
            return (cell, offset + length)
        }
        guard let (size, sizeLength) = Varint.decode(view, at: offset), size <= UInt64(maxPayload) else {
            return nil
        }
        offset += sizeLength
        var rowid: Int64?
        if type == .tableLeaf {
            guard let (key, keyLength) = Varint.decode(view, at: offset) else { return nil }
            rowid = Int64(bitPattern: key)
            offset += keyLength
        }
        let payloadSize = Int(size)
        let local = layout.localSize(payloadSize: payloadSize, type: type)
        guard local >= 0, offset + local <= usableSize, let payload = view.slice(offset, local) else { return nil }
        offset += local
        var overflow: UInt32?
        if local < payloadSize {
            guard offset + 4 <= usableSize, let first = view.u32(offset), first >= 2, first <= maxPage else {
                return nil
            }
            overflow = first
            offset += 4
        }
        let cell = BTreeCell(
            leftChild: leftChild, rowid: rowid, payloadSize: payloadSize, localPayload: payload,
            overflowPage: overflow)
        return (cell, offset)
    }
}
