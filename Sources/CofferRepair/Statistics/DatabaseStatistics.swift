// DatabaseStatistics — what `coffer stats` reports: space per table and index, the file's free pages, and
// the WAL's size and checkpoint state. Computed by StatisticsCollector from the page decoder (the linked
// SQLCipher 3.4.1 has no `dbstat` virtual table), reading the file and its WAL only.
//
// Definitions (each field's documentation repeats the one it uses):
// - rows: the entries of the B-tree: cells of table leaves for a rowid table; for an index or a WITHOUT
//   ROWID table, cells of every page (an index B-tree keeps entries in its interior cells too).
// - pages: the tree's interior and leaf pages plus the overflow pages of its cells; bytes = pages × page size.
// - unused bytes: on a B-tree page, the gap between the cell-pointer array and the cell content, the
//   freeblocks and the fragmented bytes; on an overflow page, what the last page of a chain leaves empty.
// - fragmentation: leaves read in key order (what a full scan does); a step from one leaf to the next is a
//   gap when the next leaf is not the very next page of the file. Fragmentation is gaps ÷ (leaves − 1), from
//   0 (a scan reads the file sequentially) to 1 (every step seeks); 0 for a tree of one leaf. `coffer vacuum`
//   brings it down (rows are copied in key order into a fresh file).

/// Space used by one table or index.
public struct ObjectStatistics: Sendable, Codable, Equatable {
    /// The table or index name ("sqlite_master" for the schema).
    public var name: String
    /// "table" or "index" (a WITHOUT ROWID table is a "table" kept in an index-format tree).
    public var kind: String
    /// The table an index belongs to (the table itself for a table).
    public var table: String
    /// The root page.
    public var rootPage: UInt32
    /// Entries in the tree: rows of a table, keys of an index.
    public var rows = 0
    /// Interior pages of the tree.
    public var interiorPages = 0
    /// Leaf pages of the tree.
    public var leafPages = 0
    /// Overflow pages of its cells.
    public var overflowPages = 0
    /// Pages that could not be read or parsed where the tree points (a damaged file).
    public var unreadablePages = 0
    /// Sum of the cells' payload sizes (records, including what spills to overflow pages).
    public var payloadBytes = 0
    /// Bytes of its pages that hold nothing: free space on B-tree pages, the empty tail of overflow chains.
    public var unusedBytes = 0
    /// Gaps between consecutive leaves in key order ÷ (leaves − 1): 0 sequential, 1 every step seeks.
    public var fragmentation = 0.0
    /// Every page: interior + leaf + overflow.
    public var pages = 0
    /// Bytes of its pages in the file: pages × page size.
    public var bytes = 0

    /// A fresh record for one object.
    public init(name: String, kind: String, table: String, rootPage: UInt32) {
        self.name = name
        self.kind = kind
        self.table = table
        self.rootPage = rootPage
    }

    enum CodingKeys: String, CodingKey {
        case name, kind, table, rows, bytes, fragmentation
        case rootPage = "root_page"
        case interiorPages = "interior_pages"
        case leafPages = "leaf_pages"
        case overflowPages = "overflow_pages"
        case unreadablePages = "unreadable_pages"
        case payloadBytes = "payload_bytes"
        case unusedBytes = "unused_bytes"
        case pages
    }
}

/// The WAL beside a database and how far checkpoints have copied it back.
public struct WALStatistics: Sendable, Codable, Equatable {
    /// The WAL file's size in bytes (0 when there is none).
    public var bytes: UInt64 = 0
    /// Whole frames in the file, committed or not, current or left from an earlier generation.
    public var frames = 0
    /// Frames up to the last intact commit of the current generation: the database as readers see it.
    public var committedFrames = 0
    /// Frames after the last commit (a transaction in progress or torn by a crash).
    public var uncommittedFrames = 0
    /// Committed frames whose checksum fails (damage).
    public var damagedFrames = 0
    /// Committed frames already copied into the main file by a checkpoint, from the `-shm` wal-index
    /// (`nBackfill`); nil without a `-shm` (no connection has the database open, or it was removed).
    public var backfilledFrames: Int?
    /// The last frame the `-shm` wal-index knows as committed (`mxFrame`); nil without a `-shm`.
    public var shmMaxFrame: Int?
    /// "none" (no WAL or empty), "checkpointed" (every committed frame is in the main file: the next write
    /// restarts the WAL from its start), "pending" (committed frames wait for a checkpoint), or "unknown"
    /// (frames, but no `-shm` saying what was copied: the next open recovers the WAL and checkpoints it).
    public var checkpointState = "none"

    /// An absent WAL.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case bytes, frames
        case committedFrames = "committed_frames"
        case uncommittedFrames = "uncommitted_frames"
        case damagedFrames = "damaged_frames"
        case backfilledFrames = "backfilled_frames"
        case shmMaxFrame = "shm_max_frame"
        case checkpointState = "checkpoint_state"
    }
}

/// Space use of a whole database: what `coffer stats` prints.
///
/// ```swift
/// let file = try DatabaseFile(path: "app.db", key: .passphrase("secret"))
/// let stats = StatisticsCollector.collect(file: file)
/// for object in stats.objects { print(object.name, object.rows, object.pages, object.fragmentation) }
/// ```
public struct DatabaseStatistics: Sendable, Codable, Equatable {
    /// The database file.
    public var path: String
    /// The file size in bytes.
    public var fileSize: UInt64
    /// The page size.
    public var pageSize: Int
    /// Bytes reserved at the end of every page (the cipher's IV and HMAC).
    public var reservedBytes: Int
    /// Pages in the database as readers see it (the main file overlaid with the committed WAL).
    public var pageCount: Int
    /// Freelist pages (trunks and leaves): space a vacuum gives back to the file system.
    public var freelistPages: Int
    /// Pointer-map pages (auto-vacuum files only).
    public var pointerMapPages: Int
    /// "none", "full" or "incremental" (header bytes 52 and 64).
    public var autoVacuum: String
    /// Pages no tree, chain, freelist or pointer map claims (damage, or a file being written).
    public var unclaimedPages: Int
    /// Every table and index, sqlite_master first, then in schema order.
    public var objects: [ObjectStatistics]
    /// The WAL.
    public var wal: WALStatistics

    enum CodingKeys: String, CodingKey {
        case path, objects, wal
        case fileSize = "file_size"
        case pageSize = "page_size"
        case reservedBytes = "reserved_bytes"
        case pageCount = "page_count"
        case freelistPages = "freelist_pages"
        case pointerMapPages = "pointer_map_pages"
        case autoVacuum = "auto_vacuum"
        case unclaimedPages = "unclaimed_pages"
    }
}
