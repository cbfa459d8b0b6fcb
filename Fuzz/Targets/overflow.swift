// Fuzz target: an overflow chain over a small in-memory page map (512-byte pages, U = 512).
// Bytes 0–3: first page; 4–7: remaining payload length (masked); the rest: the pages.

@testable import CofferFormat

func fuzz_overflow(_ bytes: [UInt8]) {
    guard bytes.count >= 8 else { return }
    let view = ByteView(bytes)
    let first = view.u32(0) ?? 0
    let remaining = Int((view.u32(4) ?? 0) & 0x00ff_ffff)
    let source = MemoryPageSource(pageSize: 512, usableSize: 512, bytes: Array(bytes.dropFirst(8)))
    let result = OverflowReader(source: source).read(first: first, remaining: remaining)
    fuzzCheck(source.reads <= source.pages.count, "more reads (\(source.reads)) than pages")
    if case .success(let (payload, pages)) = result {
        fuzzCheck(payload.count == remaining, "payload length \(payload.count) != \(remaining)")
        fuzzCheck(Set(pages).count == pages.count, "chain revisits a page")
        fuzzCheck(pages.allSatisfy { $0 >= 2 && $0 <= source.pageCount }, "chain page out of range")
    }
}
