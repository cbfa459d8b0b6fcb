// RepairReport — what a salvage did, for the CLI (`--json`) and for tests.

/// The outcome of a salvage. Encoded with snake_case keys.
public struct RepairReport: Sendable, Codable, Equatable {
    /// Pages in the main file (from its size).
    public var pagesTotal = 0
    /// Pages that authenticated (or, in plaintext, were readable), zeroed pages excluded.
    public var pagesOk = 0
    /// Pages whose HMAC failed.
    public var pagesBadHMAC = 0
    /// Authenticated pages with no recognizable role (not reached, not a B-tree page, not all zero).
    public var pagesUnparseable = 0
    /// All-zero pages outside the freelist: zero-filled damage (not counted in ``pagesOk``).
    public var pagesZero = 0
    /// Orphan leaves adopted into a schema table.
    public var orphanLeavesAdopted = 0
    /// Orphan leaves put into inferred `recovered_N` tables.
    public var orphanLeavesInferred = 0
    /// Orphan index-format pages left unattributed (usually pages of real indexes, which are rebuilt).
    public var orphanPagesIgnored = 0
    /// Orphan leaves attributed by backup repair material (stored bytes matched its checksum); also
    /// counted in ``orphanLeavesAdopted``.
    public var leavesFromMaterial = 0
    /// Whether the schema came from backup repair material (sqlite_master unreadable in the file).
    public var schemaFromMaterial = false
    /// Whether the schema came from an older version of page 1 (its newest committed WAL frame is lost).
    public var schemaFromOlderPageOne = false
    /// Whether the file's salt was replaced by the one kept in backup repair material.
    public var saltFromMaterial = false
    /// Overflow chains rejected (unreadable page, wrong length, loop).
    public var overflowChainsBroken = 0
    /// Rows salvaged per table.
    public var tables: [String: Int] = [:]
    /// Total rows salvaged.
    public var rowsSalvaged = 0
    /// Cells found but not salvaged (broken overflow, undecodable record, record not fitting its table).
    public var rowsDropped = 0
    /// Rows skipped because a copy with the same rowid/key was already salvaged (tree copies win).
    public var rowsDuplicate = 0
    /// WAL frames whose pages were used.
    public var walFramesUsed = 0
    /// WAL frames that failed authentication and fell back to the main file.
    public var walFramesBad = 0
    /// Whether sqlite_master was readable.
    public var schemaReadable = false
    /// sqlite_master leaves recovered by scanning when page 1 was unreadable.
    public var schemaLeavesRecovered = 0
    /// The source's text encoding: 1 UTF-8, 2 UTF-16le, 3 UTF-16be (1 when unknown). UTF-16 TEXT is
    /// converted to UTF-8 exactly as SQLite converts it on read (see ``TextEncoding``); the
    /// numeric-looking-text checks apply to UTF-8 sources only.
    public var textEncoding = 1
    /// The detected page size.
    public var pageSize = 0
    /// The cipher profile name ("sqlcipher3", "plaintext", …).
    public var profile = ""
    /// Wall-clock seconds of the salvage (`coffer repair` reports the whole run, OUTPUT closed and flushed).
    public var seconds = 0.0
    /// Schema objects OUTPUT could not get as they were (refused, failed, or a virtual table whose module
    /// the library lacks), each with the reason. Filled by ``RepairWriter/annotate(_:)``.
    public var schemaIssues: [SchemaIssue] = []

    /// An empty report.
    public init() {}

    enum CodingKeys: String, CodingKey {
        case pagesTotal = "pages_total"
        case pagesOk = "pages_ok"
        case pagesBadHMAC = "pages_bad_hmac"
        case pagesUnparseable = "pages_unparseable"
        case pagesZero = "pages_zero"
        case orphanLeavesAdopted = "orphan_leaves_adopted"
        case orphanLeavesInferred = "orphan_leaves_inferred"
        case orphanPagesIgnored = "orphan_pages_ignored"
        case leavesFromMaterial = "leaves_from_material"
        case schemaFromMaterial = "schema_from_material"
        case schemaFromOlderPageOne = "schema_from_older_page_one"
        case saltFromMaterial = "salt_from_material"
        case overflowChainsBroken = "overflow_chains_broken"
        case tables
        case rowsSalvaged = "rows_salvaged"
        case rowsDropped = "rows_dropped"
        case rowsDuplicate = "rows_duplicate"
        case walFramesUsed = "wal_frames_used"
        case walFramesBad = "wal_frames_bad"
        case schemaReadable = "schema_readable"
        case schemaLeavesRecovered = "schema_leaves_recovered"
        case textEncoding = "text_encoding"
        case pageSize = "page_size"
        case profile, seconds
        case schemaIssues = "schema_issues"
    }
}

/// Progress of a running salvage.
public struct SalvageProgress: Sendable {
    /// Pages examined so far (tree walks and orphan scan).
    public var pagesScanned: Int
    /// Pages in the file.
    public var pagesTotal: Int
    /// Rows delivered to the sink so far.
    public var rowsSalvaged: Int
}
