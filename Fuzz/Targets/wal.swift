import Foundation

// Fuzz target: a WAL file → committed frames (page size 512). Every committed frame lies inside the file.
@testable import CofferFormat

func fuzz_wal(_ bytes: [UInt8]) {
    let path = scratchFile("wal", bytes)
    guard let index = WALIndex(path: path, pageSize: 512) else { return }
    // One version per page (its newest committed frame), and a page is either served or lost.
    fuzzCheck(index.frames.values.allSatisfy { $0.count == 1 }, "more than one version of a page")
    fuzzCheck(index.lost.isDisjoint(with: index.frames.keys), "a lost page is served")
    let pages = index.frames.count + index.lost.count
    fuzzCheck(pages <= index.committedFrames, "\(pages) pages from \(index.committedFrames) committed frames")
    fuzzCheck(index.databaseSize > 0, "commit frame with size 0")
    for offsets in index.frames.values {
        for offset in offsets {
            fuzzCheck(offset >= 32 + 24 && offset + 512 <= UInt64(bytes.count), "frame body outside the file")
            fuzzCheck((offset - 32 - 24) % UInt64(24 + 512) == 0, "frame body misaligned")
        }
    }
}
