import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The LRU under the key-value store's decoded-object cache: recency, the cost
/// bound, replacement and reuse of freed slots.
final class CostBoundedLRUEvictionTests: XCTestCase {
    func testTheLeastRecentlyUsedGoFirstOnceTheCostPassesTheLimit() {
        var lru = CostBoundedLRU<Int64, String>(costLimit: 100)
        for id in Int64(1)...3 { lru.insert("v\(id)", for: id, cost: 30) }
        XCTAssertEqual(lru.use(1), "v1")  // 1 becomes the most recent: 2 is now the oldest
        lru.insert("v4", for: 4, cost: 30)
        XCTAssertEqual(lru.count, 3)
        XCTAssertEqual(lru.totalCost, 90)
        XCTAssertNil(lru.use(2), "2 was least recently used")
        lru.insert("v5", for: 5, cost: 50)  // evicts the two oldest: 3, then 1
        XCTAssertEqual(lru.count, 2)
        XCTAssertNil(lru.use(3))
        XCTAssertNil(lru.use(1))
        XCTAssertEqual(lru.use(4), "v4")
        XCTAssertEqual(lru.use(5), "v5")
        XCTAssertEqual(lru.totalCost, 80)
    }

    func testReplacingAKeyReplacesItsCostAndAnOversizedValueIsNotKept() {
        var lru = CostBoundedLRU<Int64, String>(costLimit: 100)
        lru.insert("a", for: 1, cost: 40)
        lru.insert("b", for: 1, cost: 60)
        XCTAssertEqual(lru.count, 1)
        XCTAssertEqual(lru.totalCost, 60)
        XCTAssertEqual(lru.use(1), "b")
        lru.insert("huge", for: 1, cost: 101)
        XCTAssertEqual(lru.use(1), "b", "a value over the whole budget is not kept, and what was there stays")
        XCTAssertEqual(lru.removeValue(for: 1), "b")
        XCTAssertEqual(lru.count, 0)
        XCTAssertEqual(lru.totalCost, 0)
        XCTAssertNil(lru.removeValue(for: 1))
    }

    func testFreedSlotsAreReusedAndTheListStaysConsistent() {
        var lru = CostBoundedLRU<Int64, Int64>(costLimit: 10)
        var generator = SeededGenerator(seed: 25)
        var model: [Int64] = []  // keys, most recent last
        for _ in 0..<2_000 {
            let key = Int64(generator.next(upTo: 20))
            switch generator.next(upTo: 3) {
            case 0:
                lru.insert(key * 10, for: key, cost: 1)
                model.removeAll { $0 == key }
                model.append(key)
                if model.count > 10 { model.removeFirst() }
            case 1:
                let used = lru.use(key)
                XCTAssertEqual(used, model.contains(key) ? key * 10 : nil)
                if model.contains(key) {
                    model.removeAll { $0 == key }
                    model.append(key)
                }
            default:
                XCTAssertEqual(lru.removeValue(for: key), model.contains(key) ? key * 10 : nil)
                model.removeAll { $0 == key }
            }
            XCTAssertEqual(lru.count, model.count)
            XCTAssertEqual(lru.totalCost, model.count)
        }
        lru.removeAll()
        XCTAssertEqual(lru.count, 0)
        XCTAssertNil(lru.use(model.last ?? 0))
    }
}
