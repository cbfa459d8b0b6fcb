// DecodedInspection — `info` and `verify` for files the linked SQLCipher 3.4.1 cannot open (SQLCipher 1, 2
// and 4 formats, custom settings), answered by Coffer's own page decoder and salvage engine.
//
// Verify has two parts, because each catches what the other cannot:
// 1. Per-page scan: every page of the main file and the newest frame of every page in the WAL is
//    authenticated (HMAC). A profile without HMAC (SQLCipher 1) cannot be checked page by page; only the
//    structural part applies.
// 2. Structure: the salvage engine walks the schema and every tree (rows counted, none kept). On an intact
//    file every cell decodes, every overflow chain is whole, no leaf is orphaned and no page is unreadable;
//    anything else is reported as a problem. A tail page cut short by truncation is a problem too.
// Info reads the page size, page count, profile, user_version and per-table row counts the same way.

import Coffer
import Foundation

/// What `coffer info` shows for a file read through the page decoder: one the linked SQLCipher 3.4.1
/// cannot open (SQLCipher 1, 2 or 4, custom settings, damage).
///
/// Coffer's `DatabaseInfo` is the summary of a file SQLite opens (journal mode, SQLite's row counts); this
/// one holds what only the decoder knows (the profile found, committed WAL frames) and counts rows as the
/// salvage engine reads them.
public struct DecodedFileInfo: Sendable, Codable, Equatable {
    /// The database file.
    public var path: String
    /// The file size in bytes.
    public var fileSize: UInt64
    /// The page size found.
    public var pageSize: Int
    /// Pages in the database (main file overlaid with the committed WAL).
    public var pageCount: Int
    /// The profile name ("sqlcipher4", "custom", …).
    public var profile: String
    /// The full settings, spelled out.
    public var cipher: String
    /// `PRAGMA user_version` from page 1, when readable.
    public var userVersion: Int?
    /// Committed WAL frames applied.
    public var walFrames: Int
    /// Tables and their row counts, as the salvage engine reads them.
    public var tables: [String: Int]
}

/// What `coffer verify` reports for a file read through the page decoder.
public struct DecodedVerification: Sendable, Codable, Equatable {
    /// The page size found.
    public var pageSize: Int
    /// Pages in the main file.
    public var pageCount: Int
    /// The profile name.
    public var profile: String
    /// Main-file pages whose HMAC failed, that are all zero (outside a plaintext file's freelist), or that
    /// could not be read whole.
    public var damagedPages: [UInt32]
    /// Pages whose newest committed WAL frame failed its HMAC.
    public var damagedWALPages: [UInt32]
    /// Whether pages carry an HMAC (false for SQLCipher 1: only the structural check applies).
    public var pagesAuthenticated: Bool
    /// Structural problems found by walking every tree.
    public var structuralProblems: [String]

    /// True when nothing is wrong.
    public var isClean: Bool { damagedPages.isEmpty && damagedWALPages.isEmpty && structuralProblems.isEmpty }
}

/// Info and verification through the page decoder.
///
/// ```swift
/// let file = try ProfileDetection.open(path: "app.db", key: .passphrase("secret"))
/// let result = try DecodedInspection.verify(file: file)
/// print(result.isClean)
/// ```
public enum DecodedInspection {
    /// Page size, count, profile and row counts of `file` (overlaid with `walPath` or `<path>-wal`).
    public static func info(file: DatabaseFile, walPath: String? = nil) throws -> DecodedFileInfo {
        let salvager = Salvager(file: file, walPath: walPath)
        var sink = RowCountingSink()
        let report = try salvager.run(into: &sink)
        var userVersion: Int?
        if case .success(let page1) = salvager.source.page(1), let value = ByteView(page1).u32(60) {
            userVersion = Int(Int32(bitPattern: value))
        }
        return DecodedFileInfo(
            path: file.path, fileSize: file.fileSize, pageSize: file.pageSize, pageCount: Int(salvager.source.pageCount),
            profile: file.settings.name, cipher: ProfileDetection.describe(file), userVersion: userVersion,
            walFrames: salvager.wal?.index.committedFrames ?? 0, tables: report.tables)
    }

    /// Scans every page's HMAC, the WAL's newest frames, and the structure of every tree.
    public static func verify(file: DatabaseFile, walPath: String? = nil) throws -> DecodedVerification {
        var damaged: [UInt32] = []
        let authenticated = file.settings.isEncrypted && file.settings.hmacAlgorithm != .none
        if file.pageCount >= 1 {
            let lockByte = DatabaseHeader.lockBytePage(pageSize: file.pageSize)
            for pageNumber in 1...file.pageCount {
                switch file.page(pageNumber) {
                case .success: continue
                case .failure(.zeroed) where pageNumber == lockByte: continue
                case .failure: damaged.append(pageNumber)
                }
            }
            if !file.settings.isEncrypted { damaged = zeroedPages(plaintext: file) }
        }
        var problems: [String] = []
        if file.fileSize % UInt64(file.pageSize) != 0 {
            problems.append("the file ends with a partial page (\(file.fileSize % UInt64(file.pageSize)) bytes): truncated")
        }
        let salvager = Salvager(file: file, walPath: walPath)
        var walDamaged: [UInt32] = []
        if let wal = salvager.wal, let walFile = ReadOnlyFile(path: walPath ?? file.path + "-wal") {
            walDamaged = wal.index.lost.sorted()
            for pageNumber in wal.index.frames.keys.sorted() {
                // The first offset is the newest committed frame of the page (as WALOverlay reads them).
                guard let offset = wal.index.frames[pageNumber]?.first else { continue }
                guard let raw = walFile.read(at: offset, count: file.pageSize),
                    case .success = file.decoder.decode(raw, pageNumber: pageNumber)
                else {
                    walDamaged.append(pageNumber)
                    continue
                }
            }
            walDamaged.sort()
        }
        if let lost = WALFrameMap.lostCommits(path: walPath ?? file.path + "-wal") { problems.append(lost) }
        var sink = RowCountingSink()
        let report = try salvager.run(into: &sink)
        if !report.schemaReadable { problems.append("the schema (sqlite_master) is unreadable") }
        if report.rowsDropped > 0 { problems.append("\(report.rowsDropped) cells do not decode or do not fit their table") }
        if report.overflowChainsBroken > 0 { problems.append("\(report.overflowChainsBroken) overflow chains are broken") }
        let orphans = report.orphanLeavesAdopted + report.orphanLeavesInferred
        if orphans > 0 { problems.append("\(orphans) leaf pages are not reachable from any tree") }
        if report.pagesUnparseable > 0 { problems.append("\(report.pagesUnparseable) pages have no recognisable role") }
        let unreadable = report.pagesBadHMAC + report.pagesZero - damaged.count
        if unreadable > 0 { problems.append("\(unreadable) pages referenced by the trees are missing or unreadable") }
        return DecodedVerification(
            pageSize: file.pageSize, pageCount: Int(file.pageCount), profile: file.settings.name, damagedPages: damaged,
            damagedWALPages: walDamaged, pagesAuthenticated: authenticated, structuralProblems: problems)
    }
}

extension DecodedInspection {
    /// The all-zero pages of a plaintext file that are damage: every page of zeros except those whose role
    /// allows it (a free page, an overflow page of a run of zeros, the never-written lock-byte page). A
    /// zeroed B-tree page has type 0, so it is never reached as one and shows as a page of no role.
    ///
    /// Reading every page for zeros costs a fraction of walking every B-tree for the roles, so the walk
    /// runs only when some page is all zeros (a whole file's walk is most of a clean `coffer verify`).
    public static func zeroedPages(plaintext file: DatabaseFile) -> [UInt32] {
        guard file.pageCount > 0 else { return [] }
        let zeroed = Set(
            (1...file.pageCount).filter { pageNumber in
                guard case .success(let bytes) = file.page(pageNumber) else { return false }
                return bytes.first == 0 && ByteView(bytes).isAllZero
            })
        guard !zeroed.isEmpty else { return [] }
        let allowed: Set<PageRole> = [.overflow, .freelistLeaf, .freelistTrunk, .lockByte]
        return PageRoles.classify(file).filter { info in
            zeroed.contains(info.pageNumber) && !allowed.contains(info.role)
        }.map(\.pageNumber)
    }
}

/// A sink that keeps nothing: the salvage report already counts rows per table.
struct RowCountingSink: SalvageSink {
    mutating func begin(table: TableDescription) throws {}
    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {}
    mutating func finish(schema: Schema) throws {}
}
