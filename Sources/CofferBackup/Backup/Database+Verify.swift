import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

/// What ``Database/verify(path:configuration:)`` found.
public struct VerificationReport: Codable, Sendable, Hashable {
    /// The page size used for the scan.
    public var pageSize: Int
    /// Pages in the main file.
    public var pageCount: Int
    /// Pages of the main file that are damaged: their HMAC fails, or they are all zero (SQLCipher reads
    /// such a page unchecked). Empty for plaintext databases: which of their zero pages are damage depends
    /// on each page's role (`coffer verify` works it out with the repair engine's page roles).
    public var damagedPages: [Int]
    /// Page numbers of committed WAL frames whose HMAC fails (frames past the last commit — torn or
    /// rolled back — are not part of the database and are not checked).
    public var damagedWALPages: [Int]
    /// Damage in the WAL's structure: a checksum chain that breaks before the last commit frame (the
    /// commits after the break are lost to SQLite). Empty when the WAL is whole or absent.
    public var walProblems: [String]
    /// What `PRAGMA integrity_check` (`PRAGMA quick_check` at ``VerificationDepth/quick``) reported (empty
    /// when it said `ok`), or the error that stopped it.
    public var integrityErrors: [String]

    /// True when no page is damaged and the integrity check passed.
    public var isClean: Bool {
        damagedPages.isEmpty && damagedWALPages.isEmpty && walProblems.isEmpty && integrityErrors.isEmpty
    }
}

/// How much of SQLite's own consistency check ``Database/verify(path:configuration:depth:)`` runs beside
/// the page scan (which is the same at both depths).
public enum VerificationDepth: String, Codable, Sendable, CaseIterable {
    /// `PRAGMA integrity_check`: every B-tree's structure, every cell and record, `NOT NULL` and `CHECK`
    /// constraints, and every index entry against its table's row (a missing or extra entry, a `UNIQUE`
    /// index holding duplicates). The default.
    case full
    /// `PRAGMA quick_check`: the same walk of every page, cell and record, without matching index entries
    /// to rows, so an index that no longer agrees with its table passes. Two to four times faster on
    /// indexed tables as measured (SQLite's own: 273–282 MB/s against 104–144 on `coffer-bench`'s S1 table,
    /// 1.5 s against 5.9 s on a 197 MB file with two indexes); run ``full`` before trusting an index, and
    /// after a repair.
    case quick

    /// The pragma this depth runs.
    var pragma: String { self == .full ? "integrity_check" : "quick_check" }
}

extension Database {
    /// Checks a database file: every page's HMAC in the main file and in the WAL's committed frames, the
    /// WAL's checksum chain (a break before its last commit frame loses committed transactions), and, on
    /// a second thread meanwhile, `PRAGMA integrity_check` through a read-only ``Database`` (most of the
    /// time: it checks every index entry against its table; `depth` ``VerificationDepth/quick`` runs
    /// `PRAGMA quick_check` instead, which skips that). The file at `path` and its journal files are only
    /// ever read: SQLite 3.15 would otherwise checkpoint the WAL into the main file when its last
    /// connection closes, roll back a hot journal, and create a `-shm`. So the check reads the file in
    /// place, opened `immutable` (read-only, no locks, nothing created beside it), only when no `-wal`,
    /// `-journal` or `-shm` lies beside it, and runs again on a private copy if the file changed
    /// meanwhile or to confirm a problem it found; with a side file it reads a private copy of the file
    /// and its `-wal`/`-journal`.
    ///
    /// ```swift
    /// let report = try Database.verify(path: "app.db", configuration: .init(encryption: .passphrase("pw")))
    /// if !report.isClean { print("damaged pages:", report.damagedPages) }
    /// ```
    ///
    /// - Throws: ``CofferError/fileNotFound``, or ``CofferError/wrongPassphrase`` when no page at all
    ///   authenticates (a wrong key — or a destroyed salt, which only repair material can get past).
    public static func verify(
        path: String, configuration: Configuration, depth: VerificationDepth = .full
    ) throws -> VerificationReport {
        guard FileManager.default.fileExists(atPath: path) else {
            throw CofferError(code: .fileNotFound, message: "no database at \(path)")
        }
        var readOnly = configuration
        readOnly.readOnly = true
        // The key is derived once, for both halves, while the integrity check's private copy is made
        // (the derivation and page size are the file's own: CipherDetection).
        let derivation = SideThread(name: "coffer.verify.key") {
            try DatabaseKey.make(for: configuration.encryption, path: path, options: configuration.cipher)
        }
        // integrity_check (SQLite's own B-tree walk, most of the time) runs on a second thread while this
        // one reads every page for its HMAC: the two read the file independently. Without a -wal,
        // -journal or -shm beside it, it reads the file in place, opened immutable, and confirms any
        // problem it finds there on a copy; with one, it reads a copy.
        let integrity = SideThread(name: "coffer.verify.integrity") { [readOnly] in
            try WALScan.impossibleClaim(databasePath: path).map { [$0] }
                ?? InputCopy.withView(path, acceptsInPlace: { $0.isEmpty }) { view, immutable in
                    integrityProblems(
                        path: view, configuration: readOnly, depth: depth, key: try derivation.join(), immutable: immutable)
                }
        }
        let pages = Result { try scanPages(path: path, configuration: configuration, key: try derivation.join()) }
        let integrityErrors = Result { try integrity.join() }
        // The scan's error first: a wrong key is what a failing verify most often means.
        let scan = try pages.get()
        return VerificationReport(
            pageSize: scan.pageSize, pageCount: scan.pageCount, damagedPages: scan.damaged,
            damagedWALPages: scan.damagedInWAL,
            walProblems: WALFrameMap.lostCommits(path: path + "-wal").map { [$0] } ?? [],
            integrityErrors: try integrityErrors.get())
    }

    /// The page-level half of ``verify(path:configuration:)``: the page size and count, the main file's
    /// damaged pages (HMAC failures and zeroed pages, one read of the file) and the WAL's.
    private static func scanPages(
        path: String, configuration: Configuration, key: DatabaseKey?
    ) throws -> (pageSize: Int, pageCount: Int, damaged: [Int], damagedInWAL: [Int]) {
        var damaged: [Int] = []
        var damagedInWAL: [Int] = []
        let file = try PageFile(path: path, writable: false)
        let pageSize = try key?.pageSize ?? plaintextPageSize(file)
        let pageCount = file.size / pageSize
        if let key, pageCount > 0 {
            let codec = try key.pageDecoder(path: path, pageSize: pageSize, usesHMAC: configuration.cipher.usesHMAC)
            damaged = try damagedPages(in: file, codec: codec, zeroedAreDamaged: true)
            if codec.settings.hmacAlgorithm != .none && damaged.count == pageCount {
                throw CofferError(
                    code: .wrongPassphrase,
                    message: "no page of \(path) authenticates: wrong passphrase or key (or a destroyed salt)")
            }
            try WALScan.scan(path: path + "-wal") { frame in
                if !frame.page.withUnsafeBytes({ codec.libraryAccepts($0, pageNumber: frame.pageNumber) }) {
                    damagedInWAL.append(Int(frame.pageNumber))
                }
            }
        }
        return (pageSize, pageCount, damaged, damagedInWAL)
    }

    /// A plaintext file's page size from its header (bytes 16–17, 1 meaning 65536), 4096 when unreadable.
    private static func plaintextPageSize(_ file: PageFile) throws -> Int {
        let header = try file.read(count: 18, at: 0)
        return DatabaseHeader.pageSize(header) ?? 4096
    }
}
