// WALOverlay — the main file as the WAL's committed frames say it is.
//
// A page's newest committed frame is used when it authenticates (its HMAC is keyed by the page number,
// exactly as in the main file). If it fails, older committed frames of the page are tried, then the main
// file's page: a damaged WAL never makes a page worse than ignoring the WAL. The database size is the one
// recorded by the last commit, bounded by what actually exists (main file pages plus WAL frames).

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
    /// Pages whose newest WAL frame failed authentication so far.
    public var framesBad: Int { badPages.count }

    private let handle: FileHandle
    private var usedPages = Set<UInt32>()
    private var badPages = Set<UInt32>()

    /// Opens the WAL at `walPath` over `file`, or returns nil if it has no committed frame.
    public init?(file: DatabaseFile, walPath: String) {
        guard let index = WALIndex(path: walPath, pageSize: file.pageSize),
            let handle = FileHandle(forReadingAtPath: walPath)
        else { return nil }
        self.file = file
        self.index = index
        self.handle = handle
        // A frame can only add pages one at a time: never believe more pages than the main file plus the
        // committed frames could hold (a crafted page number must not make the orphan scan run to 2^32).
        let highestFramePage = index.frames.keys.max() ?? 0
        let (limit, overflow) = file.pageCount.addingReportingOverflow(UInt32(clamping: index.committedFrames))
        let available = max(file.pageCount, min(highestFramePage, overflow ? UInt32.max : limit))
        pageCount = index.databaseSize == 0 ? available : min(index.databaseSize, available)
    }

    deinit { try? handle.close() }

    /// The newest authenticated committed version of the page, falling back to the main file.
    public func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        guard pageNumber >= 1, pageNumber <= pageCount else { return .failure(.outOfRange) }
        for offset in index.frames[pageNumber] ?? [] {
            guard let raw = DatabaseFile.read(handle.fileDescriptor, offset: offset, count: pageSize) else { continue }
            if case .success(let page) = file.decoder.decode(raw, pageNumber: pageNumber) {
                usedPages.insert(pageNumber)
                return .success(page)
            }
            badPages.insert(pageNumber)
        }
        return file.page(pageNumber)
    }
}
