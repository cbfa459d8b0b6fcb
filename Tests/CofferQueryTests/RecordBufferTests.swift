import XCTest

@testable import Coffer

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
}
