// Pager — a database as every reader outside SQLite sees it: the main file, its cipher, and the WAL's
// committed frames over it.
//
// Repair, verify, `coffer stats`, the page map and backups' checks all need the same thing: the newest
// committed version of each page, decrypted and authenticated. The pieces are DatabaseFile (the main file and
// its PageDecoder) and WALOverlay (committed frames over it); the Pager puts them together once, so no reader
// decides on its own whether a WAL counts. Both borrow their descriptors from the DescriptorTable, so opening
// and closing a Pager never drops the POSIX locks a live `Database` in this process holds on the same file.

import Foundation

/// The one owner of a database's files for readers outside SQLite: the main file (with its cipher) overlaid
/// with the committed frames of its WAL when one is present and valid.
///
/// ```swift
/// let pager = Pager(file: try DatabaseFile(path: "app.db", key: .passphrase("secret")))
/// if case .success(let page) = pager.page(1) { print(page.count, pager.wal?.index.committedFrames ?? 0) }
/// ```
public final class Pager: PageSource {
    /// The main file and its page decoder.
    public let file: DatabaseFile
    /// The WAL overlay, when `<path>-wal` (or the WAL given) holds committed frames.
    public let wal: WALOverlay?
    /// What pages are read from: the overlay when there is one, else the file.
    public let source: PageSource

    /// Overlays `file` with `walPath` (default `<path>-wal`) when `useWAL` is true and that WAL holds committed
    /// frames.
    public init(file: DatabaseFile, walPath: String? = nil, useWAL: Bool = true) {
        self.file = file
        let walPath = walPath ?? file.path + "-wal"
        if useWAL, FileManager.default.fileExists(atPath: walPath), let overlay = WALOverlay(file: file, walPath: walPath) {
            wal = overlay
            source = overlay
        } else {
            wal = nil
            source = file
        }
    }

    /// The page size in bytes.
    public var pageSize: Int { source.pageSize }
    /// The usable size U = page size − reserved bytes.
    public var usableSize: Int { source.usableSize }
    /// Pages in the database as of the last commit the WAL (or the file) records.
    public var pageCount: UInt32 { source.pageCount }

    /// The newest committed version of page `pageNumber`, authenticated and decrypted.
    public func page(_ pageNumber: UInt32) -> Result<[UInt8], PageFailure> { source.page(pageNumber) }
}
