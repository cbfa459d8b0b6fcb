// OverflowReader — follows an overflow chain strictly.
//
// An overflow page is: 4-byte next page number (0 on the last page), then U−4 bytes of payload. A payload of
// N bytes with L stored locally needs exactly ceil((N−L)/(U−4)) overflow pages.
//
// Rejections and why (the row is then dropped and counted, never stored truncated or padded):
// - a page in the chain fails its HMAC or cannot be read: its bytes are unknown.
// - the chain ends (next = 0) before N−L bytes are read, or continues after them: the chain and the payload
//   size disagree, so one of them is corrupt.
// - a page number repeats (loop), is 0 or 1, or is past the end of the file.

/// Why an overflow chain was rejected.
public enum OverflowFailure: Error, Sendable, Equatable {
    /// A page of the chain is unreadable (bad HMAC, I/O).
    case unreadablePage(UInt32)
    /// The chain is shorter or longer than the payload size says.
    case lengthMismatch
    /// The chain revisits a page.
    case loop
    /// A page number is out of range.
    case badPageNumber
}

/// Reads overflow chains from a ``PageSource``.
public struct OverflowReader {
    /// The page source.
    public let source: PageSource

    /// Creates a reader over `source`.
    public init(source: PageSource) { self.source = source }

    /// Reads the `remaining` payload bytes that start at overflow page `first`. On success also returns
    /// the chain's page numbers (so callers can mark them as overflow pages).
    public func read(first: UInt32, remaining: Int) -> Result<(bytes: [UInt8], pages: [UInt32]), OverflowFailure> {
        let chunk = source.usableSize - 4
        guard chunk > 0, remaining > 0 else { return .failure(.lengthMismatch) }
        let needed = (remaining + chunk - 1) / chunk
        guard needed <= Int(source.pageCount) else { return .failure(.lengthMismatch) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(remaining)
        var pages: [UInt32] = []
        var visited = Set<UInt32>()
        var current = first
        while bytes.count < remaining {
            guard current >= 2, current <= source.pageCount else {
                return .failure(current == 0 ? .lengthMismatch : .badPageNumber)
            }
            guard visited.insert(current).inserted else { return .failure(.loop) }
            guard case .success(let page) = source.page(current) else { return .failure(.unreadablePage(current)) }
            let view = ByteView(page)
            let take = min(chunk, remaining - bytes.count)
            guard let next = view.u32(0), let content = view.slice(4, take) else {
                return .failure(.unreadablePage(current))
            }
            bytes.append(contentsOf: content)
            pages.append(current)
            current = next
        }
        guard current == 0 else { return .failure(.lengthMismatch) }
        return .success((bytes, pages))
    }

    /// `cell`'s whole payload: its local part followed by its overflow chain, if it has one (with the
    /// chain's page numbers).
    public func payload(of cell: BTreeCell) -> Result<(bytes: [UInt8], pages: [UInt32]), OverflowFailure> {
        guard let first = cell.overflowPage else { return .success((cell.localPayload, [])) }
        return read(first: first, remaining: cell.payloadSize - cell.localPayload.count).map {
            (cell.localPayload + $0.bytes, $0.pages)
        }
    }
}
