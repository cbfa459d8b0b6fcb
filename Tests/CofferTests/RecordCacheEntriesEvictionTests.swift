import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The record cache's entries: second-chance eviction (the oldest insert goes first unless hit since
/// eviction last passed it), the cost bound, and a seeded run of inserts, hits and removals whose queue
/// compactions keep every entry reachable and the bound held.
final class RecordCacheEntriesEvictionTests: XCTestCase {
    private func entry(_ rowID: Int64, cost: Int) -> RecordCacheEntry<String> {
        RecordCacheEntry(record: "v\(rowID)", rowID: rowID, cost: cost, validFrom: 0)
    }

    private func record(_ entries: inout RecordCacheEntries, _ rowID: Int64) -> String? {
        entries.use(rowID).map { unsafeDowncast($0, to: RecordCacheEntry<String>.self).record }
    }

    func testAnEntryHitSinceEvictionLastPassedIsKeptAndTheOldestOtherGoes() {
        var entries = RecordCacheEntries(costLimit: 100)
        for id in Int64(1)...3 { entries.insert(entry(id, cost: 30)) }
        XCTAssertEqual(record(&entries, 1), "v1")  // 1 gets a second chance: 2 is now first out
        entries.insert(entry(4, cost: 30))
        XCTAssertEqual(entries.count, 3)
        XCTAssertEqual(entries.totalCost, 90)
        XCTAssertNil(record(&entries, 2), "2 was inserted first of those not hit")
        // The queue is 3, 4, 1 (passed over, its mark cleared); a hit on 3 saves it once more, so 4 and 1
        // go, and the newest insert stays.
        XCTAssertEqual(record(&entries, 3), "v3")
        entries.insert(entry(5, cost: 50))
        XCTAssertEqual(entries.count, 2)
        XCTAssertNil(record(&entries, 4))
        XCTAssertNil(record(&entries, 1))
        XCTAssertEqual(record(&entries, 3), "v3")
        XCTAssertEqual(record(&entries, 5), "v5")
        XCTAssertEqual(entries.totalCost, 80)
    }

    func testReplacingARowReplacesItsCostAndAnOversizedEntryIsNotKept() {
        var entries = RecordCacheEntries(costLimit: 100)
        entries.insert(entry(1, cost: 40))
        entries.insert(entry(1, cost: 60))
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries.totalCost, 60)
        entries.insert(entry(2, cost: 101))
        XCTAssertNil(record(&entries, 2))
        XCTAssertEqual(entries.totalCost, 60)
        entries.remove(1)
        XCTAssertEqual(entries.count, 0)
        XCTAssertEqual(entries.totalCost, 0)
    }

    func testSeededInsertsHitsAndRemovalsKeepTheBoundAndEveryEntryReachable() {
        var generator = SeededGenerator(seed: 2_525)
        var entries = RecordCacheEntries(costLimit: 1_000)
        var costs: [Int64: Int] = [:]  // what a lookup must find, when it finds the row at all
        for step in 0..<20_000 {
            let rowID = Int64(generator.next(upTo: 300))
            switch generator.next(upTo: 4) {
            case 0:
                let cost = 1 + generator.next(upTo: 60)
                entries.insert(entry(rowID, cost: cost))
                costs[rowID] = cost
                XCTAssertEqual(record(&entries, rowID), "v\(rowID)", "step \(step): the newest insert stays")
            case 1:
                entries.remove(rowID)
                XCTAssertNil(entries.use(rowID))
            default:
                if let found = entries.use(rowID) { XCTAssertEqual(found.cost, costs[rowID]) }
            }
            XCTAssertLessThanOrEqual(entries.totalCost, 1_000)
        }
        // Every row kept is counted once in the total, and the total can still be evicted down to nothing.
        let kept = (0..<300).compactMap { entries.use(Int64($0)) }
        XCTAssertEqual(kept.count, entries.count)
        XCTAssertEqual(kept.map(\.cost).reduce(0, +), entries.totalCost)
        entries.insert(entry(1_000, cost: 1_000))
        XCTAssertEqual(entries.count, 1)
        XCTAssertEqual(entries.totalCost, 1_000)
    }
}
