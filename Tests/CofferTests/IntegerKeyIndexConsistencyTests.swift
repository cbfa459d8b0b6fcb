import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The integer key table under the record cache's entries and the eager loads' integer key slots: every
/// sequence of sets and removals leaves it answering exactly as a dictionary would, through growth and
/// the backward shifts that deletions make in its probe runs.
final class IntegerKeyIndexConsistencyTests: XCTestCase {
    func testRandomSetsAndRemovalsMatchADictionary() {
        var generator = SeededGenerator(seed: 2_511)
        // Dense keys (long probe runs once full), then keys spread over the whole Int64 range.
        let keySpaces: [(Int64) -> Int64] = [{ $0 }, { $0 &* 0x1234_5678_9ABC_DEF1 &- 7 }]
        for key in keySpaces {
            var index = IntegerKeyIndex()
            var model: [Int64: Int] = [:]
            for step in 0..<20_000 {
                let k = key(Int64(generator.next(upTo: 600)))
                switch generator.next(upTo: 5) {
                case 0, 1, 2:
                    index.set(step, for: k)
                    model[k] = step
                case 3:
                    let removed = index.removeValue(for: k)
                    XCTAssertEqual(removed.isAbsent ? nil : removed, model.removeValue(forKey: k))
                default:
                    XCTAssertEqual(index[k], model[k])
                }
                XCTAssertEqual(index.count, model.count)
            }
            for k in (0..<600).map({ key(Int64($0)) }) { XCTAssertEqual(index[k], model[k]) }
            index.removeAll()
            XCTAssertEqual(index.count, 0)
            XCTAssertNil(index[key(1)])
            index.set(1, for: key(1))
            XCTAssertEqual(index[key(1)], 1, "usable again after removeAll")
        }
    }
}
