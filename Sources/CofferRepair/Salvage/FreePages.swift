// FreePages — which pages are free, and whether all of them are known.
//
// Free pages are never salvaged: on a plaintext file written with secure_delete off they still hold deleted
// rows and the leaves of dropped tables, byte for byte (SQLCipher's codec forces secure delete, so on
// encrypted files they are zero-filled and skipped as such). The freelist is read from the header (offset
// 32 first trunk, 36 total count; trunk: next trunk(4), leaf count(4), leaf page numbers). It is
// *complete* only when page 1 carries the SQLite magic, every trunk reads and parses, every entry is a page number in range, the chain ends
// with 0, and trunks plus leaves add up to the header's count. Otherwise (trunk damaged, header lost) the
// free pages are unknown, and:
// - trunk pages that survive are found by scanning (see `scanTrunks`) and their leaves claimed;
// - the Salvager treats every orphan leaf as possibly free (OrphanScorer's hole rule decides).

struct FreePages {
    /// Free pages found (trunks and leaves).
    var pages = Set<UInt32>()
    /// Whether the freelist from the header was walked completely and its size matched the header.
    var complete = false

    /// Walks the freelist from page 1's header. Bounded: each trunk is visited once, at most U/4 − 2 leaves
    /// are read per trunk, and the walk stops at the first page that is unreadable or malformed.
    static func fromHeader(source: PageSource, header: ByteView) -> FreePages {
        var result = FreePages()
        // A header without the magic (zeroed, overwritten) says nothing: its zeros would read as "no free
        // pages", a complete and wrong answer.
        guard header.slice(0, 16) == sqliteMagic, let first = header.u32(32), let expected = header.u32(36) else {
            return result
        }
        let maxLeaves = source.usableSize / 4 - 2
        var trunk = first
        var clean = true
        while trunk != 0 {
            let read = source.page(trunk)
            // An all-zero trunk is a valid last trunk with no leaves (a plaintext freelist of one page).
            guard trunk >= 2, trunk <= source.pageCount, result.pages.insert(trunk).inserted,
                let bytes = read.success ?? (read == .failure(.zeroed) ? [UInt8](repeating: 0, count: 8) : nil)
            else {
                clean = false
                break
            }
            let view = ByteView(bytes)
            guard let next = view.u32(0), let leafCount = view.u32(4), Int(leafCount) <= maxLeaves else {
                clean = false
                break
            }
            for index in 0..<Int(leafCount) {
                guard let leaf = view.u32(8 + 4 * index), leaf >= 2, leaf <= source.pageCount,
                    result.pages.insert(leaf).inserted
                else {
                    clean = false
                    continue
                }
            }
            trunk = next
        }
        result.complete = clean && result.pages.count == Int(expected)
        return result
    }

    /// Trunk pages found by reading every page not in `skip`: a page that is not a B-tree page, whose next
    /// pointer is 0 or a page in range, whose leaf count is 1…U/4 − 2, and whose every leaf entry is a
    /// distinct page in range that no tree reached (`reached`): a live page is never free, so one such
    /// entry means the page is something else (an overflow page of binary data, say) and nothing is
    /// claimed from it. Returns the trunks with their leaves.
    static func scanTrunks(source: PageSource, skip: Set<UInt32>, reached: Set<UInt32>) -> [(UInt32, [UInt32])] {
        guard source.pageCount >= 2 else { return [] }
        let maxLeaves = source.usableSize / 4 - 2
        var found: [(UInt32, [UInt32])] = []
        for pageNumber in 2...source.pageCount where !skip.contains(pageNumber) {
            guard case .success(let bytes) = source.page(pageNumber) else { continue }
            let view = ByteView(bytes)
            guard BTreePageHeader(page: view, pageNumber: pageNumber, usableSize: source.usableSize) == nil,
                let next = view.u32(0), next == 0 || (next >= 2 && next <= source.pageCount && next != pageNumber),
                let count = view.u32(4), count >= 1, Int(count) <= maxLeaves
            else { continue }
            var leaves: [UInt32] = []
            var seen = Set<UInt32>()
            for index in 0..<Int(count) {
                guard let leaf = view.u32(8 + 4 * index), leaf >= 2, leaf <= source.pageCount, leaf != pageNumber,
                    !reached.contains(leaf), seen.insert(leaf).inserted
                else { break }
                leaves.append(leaf)
            }
            if leaves.count == Int(count) { found.append((pageNumber, leaves)) }
        }
        return found
    }
}
