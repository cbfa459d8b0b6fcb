import CofferTestSupport
import XCTest

@testable import CofferRepair

/// `RowidSet` answers exactly as a `Set<Int64>` would, and an ascending dense walk costs one range.
final class RowidSetTests: XCTestCase {
    func testAgreesWithASetOnRandomInsertsIncludingTheExtremes() {
        var generator = SeededGenerator(seed: 42)
        for round in 0..<40 {
            var ranges = RowidSet()
            var reference = Set<Int64>()
            // Small spans make neighbours and merges frequent; the extremes check the ±1 arithmetic.
            let span = Int64(round % 4 == 0 ? 40 : 400)
            for _ in 0..<600 {
                let rowid: Int64
                switch Int.random(in: 0..<20, using: &generator) {
                case 0: rowid = .min + Int64.random(in: 0...2, using: &generator)
                case 1: rowid = .max - Int64.random(in: 0...2, using: &generator)
                default: rowid = Int64.random(in: -span...span, using: &generator)
                }
                XCTAssertEqual(ranges.insert(rowid).inserted, reference.insert(rowid).inserted, "round \(round), \(rowid)")
            }
            for probe in (-span - 2)...(span + 2) {
                XCTAssertEqual(ranges.contains(probe), reference.contains(probe), "round \(round), probe \(probe)")
            }
            let extremes: [Int64] = [.min, .min + 1, .min + 3, .max, .max - 1, .max - 3]
            for probe in extremes {
                XCTAssertEqual(ranges.contains(probe), reference.contains(probe), "round \(round), probe \(probe)")
            }
        }
    }

    func testAnAscendingWalkWithGapsCostsOneRangePerRun() {
        var ranges = RowidSet()
        for rowid in Int64(1)...100_000 where rowid % 10_000 != 0 { ranges.insert(rowid) }
        XCTAssertEqual(ranges.rangeCount, 10)
        ranges.insert(20_000)  // an orphan row filling a gap joins its two neighbours
        XCTAssertEqual(ranges.rangeCount, 9)
        XCTAssertFalse(ranges.insert(5).inserted)
        XCTAssertTrue(ranges.contains(20_000))
        XCTAssertFalse(ranges.contains(30_000))
    }
}
