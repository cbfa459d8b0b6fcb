// TreePageList — the pages of one B-tree, listed fast from a healthy file: what backup repair material
// records (see Coffer's RepairMaterial). Unlike TreeWalker, which parses every cell of every page of a
// possibly damaged file, it reads only what the tree's shape needs: a leaf's type byte (one 16-byte CBC
// block decrypted, PageDecoder.plaintextByte) and its stored image's checksum; interior pages (about 1 in
// 100) are decrypted whole for their child pointers. Pages out of range, seen twice, unreadable or of no
// B-tree type are not followed: a damaged tree yields what is reachable.

/// The leaf and interior pages of B-trees, from stored page images.
///
/// ```swift
/// let list = TreePageList(decoder: decoder, pageCount: 120) { file.rawPage(UInt32($0)) }
/// let pages = list.pages(root: 1)   // sqlite_master's leaves with their checksums
/// ```
public struct TreePageList {
    /// One leaf page and the ``PageChecksum`` of its stored image.
    public struct Leaf: Sendable, Equatable {
        /// The page number.
        public let pageNumber: Int
        /// ``PageChecksum/of(_:)`` of the page exactly as stored.
        public let checksum: String
    }

    /// What a walk from one root found.
    public struct Pages: Sendable, Equatable {
        /// Leaf pages in key order.
        public var leaves: [Leaf] = []
        /// Interior pages.
        public var interior: [Int] = []
        /// Pages that could not be read or are no B-tree page.
        public var unreadable: [Int] = []
    }

    /// The page codec (a plaintext decoder for a plain file).
    public let decoder: PageDecoder
    /// Pages in the database.
    public let pageCount: Int
    /// The stored image of a page (`pageSize` bytes), or nil when it cannot be read.
    public let read: (Int) -> [UInt8]?

    /// Lists over `read` with `decoder`'s page size and reserve.
    public init(decoder: PageDecoder, pageCount: Int, read: @escaping (Int) -> [UInt8]?) {
        self.decoder = decoder
        self.pageCount = pageCount
        self.read = read
    }

    /// Walks the tree rooted at `root`, leftmost child first, so leaves come out in key order.
    public func pages(root: Int) -> Pages {
        var result = Pages()
        var visited = Set<Int>()
        var stack = [root]
        let usable = decoder.usableSize
        while let page = stack.popLast() {
            guard (1...max(pageCount, 1)).contains(page), visited.insert(page).inserted else { continue }
            let headerOffset = page == 1 ? 100 : 0
            guard let stored = read(page), stored.count == decoder.pageSize,
                let typeByte = decoder.plaintextByte(stored, pageNumber: UInt32(page), at: headerOffset),
                let type = BTreePageType(rawValue: typeByte)
            else {
                result.unreadable.append(page)
                continue
            }
            if type.isLeaf {
                result.leaves.append(Leaf(pageNumber: page, checksum: PageChecksum.of(stored)))
                continue
            }
            guard let content = interiorContent(stored, pageNumber: UInt32(page)),
                let header = BTreePageHeader(page: content, pageNumber: UInt32(page), usableSize: usable),
                let right = header.rightChild
            else {
                result.unreadable.append(page)
                continue
            }
            result.interior.append(page)
            var children: [Int] = []
            for index in 0..<header.cellCount {
                guard let offset = content.u16(header.cellPointerOffset + 2 * index) else { break }
                guard Int(offset) + 4 <= usable, let child = content.u32(Int(offset)) else { continue }
                children.append(Int(child))
            }
            children.append(Int(right))
            stack.append(contentsOf: children.reversed())
        }
        return result
    }

    /// The decrypted interior page (the stored bytes of a plain file).
    private func interiorContent(_ stored: [UInt8], pageNumber: UInt32) -> ByteView? {
        guard decoder.settings.isEncrypted else { return ByteView(stored) }
        guard case .success(let page) = decoder.decode(stored, pageNumber: pageNumber) else { return nil }
        return ByteView(page)
    }
}
