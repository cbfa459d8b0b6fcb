import XCTest

@testable import CofferRepair

final class RowidSetTests: XCTestCase {
    func testAgreesWithASetOnAscendingRunsAndStragglers() {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<20 {
            var runs = RowidSet()
            var reference = Set<Int64>()
            var next: Int64 = Int64(round) - 10
            for _ in 0..<2000 {
                let rowid: Int64
                switch Int.random(in: 0..<10, using: &generator) {
                case 0..<6: rowid = next + 1  // the tree walk: consecutive
                case 6..<8: rowid = next + Int64.random(in: 2...50, using: &generator)  // a gap
                default: rowid = Int64.random(in: -20...(next + 5), using: &generator)  // an orphan's copy
                }
                next = max(next, rowid)
                XCTAssertEqual(runs.insert(rowid), reference.insert(rowid).inserted, "round \(round) rowid \(rowid)")
            }
            for probe in (-30)...(next + 10) {
                XCTAssertEqual(runs.contains(probe), reference.contains(probe), "round \(round) probe \(probe)")
            }
        }
    }

    func testExtremes() {
        var set = RowidSet()
        XCTAssertTrue(set.insert(.max))
        XCTAssertFalse(set.insert(.max))
        XCTAssertTrue(set.insert(.min))
        XCTAssertTrue(set.insert(0))
        XCTAssertFalse(set.insert(.min))
        XCTAssertTrue(set.contains(0))
        XCTAssertFalse(set.contains(1))
    }
}
