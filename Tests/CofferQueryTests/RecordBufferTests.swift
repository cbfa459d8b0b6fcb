import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The buffer fetches collect records in: order, growth past its first capacity, ownership.
final class RecordBufferTests: XCTestCase {
    private final class Tracked {
        let value: Int
        init(_ value: Int) { self.value = value }
    }

    func testRecordsComeOutInOrderAndTheBufferOwnsWhatItHolds() {
        weak var firstTaken: Tracked?
        weak var leftBehind: Tracked?
        var taken: [Tracked] = []
        do {
            let buffer = RecordBuffer<Tracked>(capacity: 2)
            XCTAssertEqual(buffer.takeArray().count, 0)
            for value in 0..<100 { buffer.append(Tracked(value)) }
            taken = buffer.takeArray()
            firstTaken = taken.first
            XCTAssertEqual(buffer.takeArray().count, 0, "taking moves the records out")
            let kept = Tracked(-2)
            leftBehind = kept
            buffer.append(kept)
        }
        XCTAssertEqual(taken.map(\.value), Array(0..<100))
        XCTAssertNotNil(firstTaken, "the array owns the records taken")
        XCTAssertNil(leftBehind, "the buffer releases what it still holds when it goes away")
    }

    func testGroupingMovesEachRecordIntoItsSlotAndDropsTheRest() {
        weak var dropped: Tracked?
        weak var grouped: Tracked?
        weak var unslotted: Tracked?
        var groups: [[Tracked]] = []
        do {
            let buffer = RecordBuffer<Tracked>(capacity: 2)
            for value in 0..<10 { buffer.append(Tracked(value)) }
            let extra = Tracked(10)
            unslotted = extra
            buffer.append(extra)
            // Slots for the first ten records only: the eleventh has no entry and is dropped too.
            let slots = [2, 0, -1, 2, 0, 0, -1, 3, 2, 0]
            XCTAssertEqual(buffer.count, 11)
            groups = buffer.takeGrouped(bySlot: slots, slotCount: 4)
            XCTAssertEqual(buffer.count, 0, "grouping moves the records out")
            XCTAssertEqual(buffer.takeArray().count, 0)
            grouped = groups[3].first
        }
        XCTAssertEqual(groups.map { $0.map(\.value) }, [[1, 4, 5, 9], [], [0, 3, 8], [7]])
        XCTAssertNotNil(grouped, "the groups own the records moved into them")
        XCTAssertNil(unslotted, "a record without a slot is released")
        do {
            let buffer = RecordBuffer<Tracked>()
            let record = Tracked(0)
            dropped = record
            buffer.append(record)
            XCTAssertEqual(buffer.takeGrouped(bySlot: [-1], slotCount: 0).count, 0)
        }
        XCTAssertNil(dropped, "a record of slot -1 is released")
    }
}
