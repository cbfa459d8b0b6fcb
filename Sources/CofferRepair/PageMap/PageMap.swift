// PageMap — every page of a file with its kind and its fate, for `--page-map` pictures.
//
// One classifier for `coffer verify` and `coffer repair` (#38): both maps come from `build(source:…)`,
// which takes every page's kind from PageRoles and its fate from `fate(of:…)`; the only input that differs
// is the set of pages a repair adopted. So a page's fate is the same in both maps unless it depends on
// adoption: an orphan verify shows is `adopted` in repair's map when repair put its rows back.
//
// Kind comes from PageRoles (reachability from sqlite_master, the freelist and the pointer map; a page no
// one claims gets the kind its bytes parse as, and the overflow chains of those orphans are followed as
// repair follows them). Fate says what happened to the page, the first that holds, and what an operator
// can do about it (`PageFate.advice`, printed in the SVG's legend):
//   lost        its newest committed WAL frame is damaged or fails its HMAC (the committed version is gone:
//               neither an older frame nor the main file's copy may stand in for it; see WALIndex) —
//               restore from a backup;
//   hmacFailed  the main file's page fails its HMAC, or is all zeros where its role does not allow zeros
//               (SQLCipher never writes a zero page; a plaintext zero page outside the freelist, an overflow
//               chain and the lock-byte page is zero-fill damage) — its contents are lost, restore from a
//               backup;
//   unparseable readable, but no B-tree page, overflow page (of a tree or of an orphan), freelist or
//               pointer-map page — nothing in it to salvage. A page that authenticates is never this merely
//               because no tree reaches it;
//   adopted     an orphan leaf a repair put back into a table (or an inferred `recovered_N` table), and the
//               overflow pages of its cells — repair only;
//   orphan      a readable B-tree page no tree reaches, or an overflow page of one's cells — `coffer repair`
//               adopts the table leaves among them (verify never adopts, so a page repair would adopt is an
//               orphan there); the rest (interior pages, index pages, stale pages) is left alone;
//   fromWAL     read from its newest committed WAL frame;
//   ok          read from the main file and claimed.
// Memory: two bytes and one owner index per page.

import Foundation

/// What a page is, as the page map colours it.
enum PageKind: UInt8, Sendable, CaseIterable, Codable {
    /// An interior page of a table B-tree (page 1 is sqlite_master's root).
    case tableInterior
    /// A leaf page of a table B-tree.
    case tableLeaf
    /// An interior page of an index (or WITHOUT ROWID table) B-tree.
    case indexInterior
    /// A leaf page of an index (or WITHOUT ROWID table) B-tree.
    case indexLeaf
    /// An overflow page.
    case overflow
    /// A freelist trunk or leaf page.
    case freelist
    /// A pointer-map page (auto-vacuum files).
    case pointerMap
    /// Anything else: unreadable, zeroed, garbage, the lock-byte page.
    case unknown

    /// The name used in the legend and the SVG's data attributes.
    var name: String {
        switch self {
        case .tableInterior: "table interior"
        case .tableLeaf: "table leaf"
        case .indexInterior: "index interior"
        case .indexLeaf: "index leaf"
        case .overflow: "overflow"
        case .freelist: "freelist"
        case .pointerMap: "pointer map"
        case .unknown: "unknown"
        }
    }
}

/// What happened to a page (see the file's header for the rules).
enum PageFate: UInt8, Sendable, CaseIterable, Codable {
    /// Read from the main file and claimed by a tree, chain, freelist or pointer map.
    case ok
    /// Read from its newest committed WAL frame.
    case fromWAL
    /// A readable B-tree page no tree reaches, or an overflow page of its cells.
    case orphan
    /// An orphan leaf a repair adopted into a table, or an overflow page of its cells.
    case adopted
    /// Readable but of no recognisable kind (never merely unreached).
    case unparseable
    /// Its HMAC failed (or it is zeroed where zeros are damage).
    case hmacFailed
    /// Its newest committed WAL frame is damaged: the committed version is lost.
    case lost

    /// The name used in the legend and the SVG's data attributes.
    var name: String {
        switch self {
        case .ok: "ok"
        case .fromWAL: "taken from the WAL"
        case .orphan: "orphan"
        case .adopted: "adopted orphan"
        case .unparseable: "unparseable"
        case .hmacFailed: "HMAC failed or zeroed"
        case .lost: "lost"
        }
    }

    /// What the fate means for an operator and what they can do about it, for the legend.
    var advice: String {
        switch self {
        case .ok: "read and claimed; nothing to do"
        case .fromWAL: "its newest committed WAL frame stands; nothing to do"
        case .orphan: "readable page no tree reaches: `coffer repair` adopts table leaves; index and stale pages stay out"
        case .adopted: "`coffer repair` put its rows back into a table (or a recovered_N table); check that table"
        case .unparseable: "readable but of no page kind: nothing in it to salvage; keep INPUT as evidence"
        case .hmacFailed: "contents lost: restore from a backup (`coffer repair` salvages the other pages)"
        case .lost: "the WAL's committed version is damaged: restore from a backup"
        }
    }
}

/// Every page's kind, fate and owner.
///
/// ```swift
/// let file = try DatabaseFile(path: "app.db", key: .passphrase("secret"))
/// let map = PageMap.build(file: file)
/// try PageMapSVG.render(map, title: "app.db").write(toFile: "app.svg", atomically: true, encoding: .utf8)
/// ```
public struct PageMap: Sendable {
    /// The page size.
    public var pageSize: Int
    /// Kind of page n at index n − 1.
    var kinds: [PageKind]
    /// Fate of page n at index n − 1.
    var fates: [PageFate]
    /// Owner of page n at index n − 1: an index into ``ownerNames``, or −1 when no table or index owns it.
    public var owners: [Int32]
    /// The tables and indexes that own pages ("sqlite_master" first when page 1 is readable).
    public var ownerNames: [String]

    /// A map of `kinds.count` pages (the four arrays are indexed by page number − 1).
    init(pageSize: Int, kinds: [PageKind], fates: [PageFate], owners: [Int32], ownerNames: [String]) {
        self.pageSize = pageSize
        self.kinds = kinds
        self.fates = fates
        self.owners = owners
        self.ownerNames = ownerNames
    }

    /// Pages in the map.
    public var pageCount: Int { kinds.count }

    /// How many pages have each fate.
    var fateCounts: [PageFate: Int] {
        fates.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    /// How many pages are of each kind.
    var kindCounts: [PageKind: Int] {
        kinds.reduce(into: [:]) { $0[$1, default: 0] += 1 }
    }

    /// Pages per owning table or index.
    public var ownerCounts: [String: Int] {
        var counts = [Int](repeating: 0, count: ownerNames.count)
        for owner in owners where owner >= 0 { counts[Int(owner)] += 1 }
        return Dictionary(uniqueKeysWithValues: zip(ownerNames, counts))
    }

    /// Maps `file` overlaid with its WAL (`walPath`, default `<path>-wal`) as ``PageRoles`` classifies it.
    /// `adopted` lists the orphan pages a repair adopted (``Salvager/adoptedPages``); empty for verify.
    public static func build(file: DatabaseFile, walPath: String? = nil, adopted: [UInt32] = []) -> PageMap {
        let pager = Pager(file: file, walPath: walPath)
        return build(
            source: pager.source, wal: pager.wal?.index, adopted: Set(adopted), plaintext: !file.settings.isEncrypted)
    }

    /// Maps what `salvager` read, with the orphans its last run adopted (as `coffer repair --page-map` does).
    public static func build(salvager: Salvager) -> PageMap {
        build(
            source: salvager.source, wal: salvager.wal?.index, adopted: Set(salvager.adoptedPages),
            plaintext: !salvager.file.settings.isEncrypted)
    }

    /// Maps `source`; `wal` is the index of the WAL `source` overlays, if any; `adopted` the orphan leaves
    /// a repair adopted (empty for verify). `plaintext` says whether to look for zero-filled pages (an
    /// encrypted file's zero page already fails to decode).
    public static func build(source: PageSource, wal: WALIndex?, adopted: Set<UInt32>, plaintext: Bool) -> PageMap {
        let infos = PageRoles.classify(source)
        // An adopted leaf's rows were read whole, overflow chains included: those pages were adopted too.
        var adopted = adopted
        let walker = TreeWalker(source: source)
        let chains = adopted.sorted().flatMap { leaf -> [(first: UInt32, remaining: Int)] in
            guard case .success(let parsed) = walker.parse(leaf) else { return [] }
            return parsed.cells.compactMap(PageRoles.chainStart)
        }
        // Only chain pages no tree reaches: a stale chain may point into a live page.
        adopted.formUnion(
            PageRoles.chainPages(chains, overflow: OverflowReader(source: source)).filter {
                Int($0) <= infos.count && !infos[Int($0) - 1].reachable
            })
        var names: [String] = []
        var ownerIndex: [String: Int32] = [:]
        var map = PageMap(
            pageSize: source.pageSize, kinds: [], fates: [], owners: [], ownerNames: [])
        map.kinds.reserveCapacity(infos.count)
        map.fates.reserveCapacity(infos.count)
        map.owners.reserveCapacity(infos.count)
        for info in infos {
            let page = info.pageNumber
            var kind = kind(of: info.role)
            if info.role == .header, case .success(let bytes) = source.page(1) {
                kind = bytes.count > 100 && bytes[100] == BTreePageType.tableInterior.rawValue ? .tableInterior : .tableLeaf
            }
            let fate = fate(
                of: info, source: source, wal: wal, adopted: adopted.contains(page), plaintext: plaintext)
            if fate == .hmacFailed || fate == .lost { kind = .unknown }
            var owner: Int32 = -1
            if let name = info.owner, fate != .hmacFailed, fate != .lost {
                if let known = ownerIndex[name] {
                    owner = known
                } else {
                    owner = Int32(names.count)
                    ownerIndex[name] = owner
                    names.append(name)
                }
            }
            map.kinds.append(kind)
            map.fates.append(fate)
            map.owners.append(owner)
        }
        map.ownerNames = names
        return map
    }

    /// The fate of one page (the rules in the file's header, in order): the one decision verify's and
    /// repair's maps share. `adopted`: a repair adopted the page (always false for verify).
    static func fate(of info: PageInfo, source: PageSource, wal: WALIndex?, adopted: Bool, plaintext: Bool) -> PageFate {
        let page = info.pageNumber
        let zerosAllowed: Set<PageRole> = [.overflow, .freelistLeaf, .freelistTrunk, .lockByte]
        if let wal, wal.lost.contains(page) || (wal.frames[page] != nil && info.role == .unreadable) { return .lost }
        if info.role == .unreadable { return .hmacFailed }
        if plaintext, !zerosAllowed.contains(info.role), case .success(let bytes) = source.page(page),
            bytes.first == 0, ByteView(bytes).isAllZero
        {
            return .hmacFailed
        }
        if info.role == .unknown { return .unparseable }
        if adopted { return .adopted }
        let orphanRoles: Set<PageRole> = [.tableLeaf, .tableInterior, .indexLeaf, .indexInterior, .overflow]
        if !info.reachable, orphanRoles.contains(info.role) { return .orphan }
        if wal?.frames[page] != nil { return .fromWAL }
        return .ok
    }

    private static func kind(of role: PageRole) -> PageKind {
        switch role {
        case .header, .tableLeaf: .tableLeaf
        case .tableInterior: .tableInterior
        case .indexInterior: .indexInterior
        case .indexLeaf: .indexLeaf
        case .overflow: .overflow
        case .freelistTrunk, .freelistLeaf: .freelist
        case .pointerMap: .pointerMap
        case .lockByte, .unreadable, .unknown: .unknown
        }
    }
}
