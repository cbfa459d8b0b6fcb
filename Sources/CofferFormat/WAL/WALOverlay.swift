// WALOverlay — the main file as the WAL's committed frames say it is.
//
// A page's newest committed frame is used when it authenticates (its HMAC is keyed by the page number,
// exactly as in the main file). If it fails, or that frame is damaged (WALIndex.lost), the page is lost:
// an older frame or the main file's copy would be a stale version of it (a later commit changed it), so
// it reads as a failure and the salvage treats it like any unreadable page. Pages with no committed frame
// come from the main file. The database size is the one recorded by the last commit, bounded by what
// actually exists (main file pages plus WAL frames).

import Foundation

/// A ``PageSource`` that overlays committed WAL frames on a ``DatabaseFile``.
public final class WALOverlay: PageSource {
    /// The main file.
    public let file: DatabaseFile
    /// The WAL index.
    public let index: WALIndex
    /// The page size.
    public var pageSize: Int { file.pageSize }
    /// The usable size.
    public var usableSize: Int { file.usableSize }
    /// Pages in the database as of the last commit.
    public let pageCount: UInt32
    /// Pages served from a WAL frame so far.
    public var framesUsed: Int { usedPages.count }
    /// Pages whose newest committed WAL frame is damaged or failed authentication so far.
    public var framesBad: Int { badPages.count }

    private let wal: ReadOnlyFile
    private var usedPages = Set<UInt32>()
    private var badPages = Set<UInt32>()

    /// Opens the WAL at `walPath` over `file`, or returns nil if it has no committed frame.
    public init?(file: DatabaseFile, walPath: String) {
        guard let index = WALIndex(path: walPath, pageSize: file.pageSize),
            let wal = ReadOnlyFile(path: walPath)
        else { return nil }
        self.file = file
        self.index = index
        self.wal = wal
        // A frame can only add pages one at a time: never believe more pages than the main file plus the
        // committed frames could hold (a crafted page number must not make the orphan scan run to 2^32).
        let highestFramePage = index.frames.keys.max() ?? 0
        let (limit, overflow) = file.pageCount.addingReportingOverflow(UInt32(clamping: index.committedFrames))
        let available = max(file.pageCount, min(highestFramePage, overflow ? UInt32.max : limit))
        pageCount = index.databaseSize == 0 ? available : min(index.databaseSize, available)
    }

    /// The version of page 1 before its newest, lost one (an older frame, else the main file's), when page 1
    /// is lost: stale as a page, but its schema still names the tables when nothing newer survives.
    public func olderPageOne() -> [UInt8]? {
        guard index.lost.contains(1) else { return nil }
        guard let offset = index.olderPageOne else { return file.page(1).success }
        guard let raw = DatabaseFile.read(wal.descriptor, offset: offset, count: pageSize) else { return nil }
        return file.decoder.decode(raw, pageNumber: 1).success
    }

    /// The page's newest committed version: its WAL frame when it has one (a failure when that frame is
    /// damaged or does not authenticate), else the main file's page.
    public func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        guard pageNumber >= 1, pageNumber <= pageCount else { return .failure(.outOfRange) }
        if index.lost.contains(pageNumber) {
            badPages.insert(pageNumber)
            return .failure(.badHMAC)
        }
        guard let offset = index.frames[pageNumber]?.first else { return file.page(pageNumber) }
        guard let raw = DatabaseFile.read(wal.descriptor, offset: offset, count: pageSize) else {
            return .failure(.ioError)
        }
        let decoded = file.decoder.decode(raw, pageNumber: pageNumber)
        if case .success = decoded { usedPages.insert(pageNumber) } else { badPages.insert(pageNumber) }
        return decoded
    }
}

/// A page source that answers page 1 with given bytes and every other page from `base`: reads the schema
/// from an older version of page 1 (``WALOverlay/olderPageOne()``) over the current pages.
package final class PageOneOverride: PageSource {
    package let base: PageSource
    package let pageOne: [UInt8]
    package var pageSize: Int { base.pageSize }
    package var usableSize: Int { base.usableSize }
    package var pageCount: UInt32 { base.pageCount }

    package init(base: PageSource, pageOne: [UInt8]) {
        self.base = base
        self.pageOne = pageOne
    }

    package func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        pageNumber == 1 ? .success(pageOne) : base.page(pageNumber)
    }
}
