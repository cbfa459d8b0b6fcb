/// A map whose entries each have a cost, the least recently used evicted once their total passes a
/// limit: the key-value store's decoded-object cache's storage. (The record cache keeps its entries in `RecordCacheEntries` instead, whose hits
/// write no list.)
///
/// A value type with no lock: its owner guards it. Entries live in an array of slots linked into a
/// recency list by index (no node objects, no reference counting per use); freed slots are reused. A
/// use is one dictionary lookup and a relink of two indices.
package struct CostBoundedLRU<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        /// Nil once the slot is free, so that a freed slot holds no value alive.
        var value: Value?
        var cost: Int
        var newer = -1
        var older = -1
    }

    /// The total cost kept; an entry costing more is not kept at all.
    let costLimit: Int
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    /// Each kept key's slot.
    private var positions: [Key: Int] = [:]
    private var newest = -1
    private var oldest = -1
    /// The sum of the kept entries' costs.
    private(set) var totalCost = 0

    package init(costLimit: Int) { self.costLimit = max(0, costLimit) }

    /// The number of entries kept.
    package var count: Int { positions.count }

    /// The value kept for `key`, marked most recently used.
    package mutating func use(_ key: Key) -> Value? {
        guard let position = positions[key] else { return nil }
        if position != newest {
            withLinks { slots, newest, oldest in
                Self.unlink(position, in: slots, &newest, &oldest)
                Self.linkAsNewest(position, in: slots, &newest, &oldest)
            }
        }
        return slots[position].value
    }

    /// Keeps `value` for `key` (replacing what was there) as the most recently used, then evicts the least
    /// recently used until the total is within the limit. A value costing more than the limit is not kept
    /// (and what was kept for `key` stays).
    package mutating func insert(_ value: Value, for key: Key, cost: Int) {
        guard cost <= costLimit else { return }
        removeValue(for: key)
        let slot = Slot(key: key, value: value, cost: cost)
        let position: Int
        if let free = freeSlots.popLast() {
            slots[free] = slot
            position = free
        } else {
            slots.append(slot)
            position = slots.count - 1
        }
        positions[key] = position
        withLinks { Self.linkAsNewest(position, in: $0, &$1, &$2) }
        totalCost += cost
        while totalCost > costLimit, oldest >= 0 { removeValue(for: slots[oldest].key) }
    }

    /// Forgets `key`; returns what was kept for it.
    @discardableResult
    package mutating func removeValue(for key: Key) -> Value? {
        guard let position = positions.removeValue(forKey: key) else { return nil }
        withLinks { Self.unlink(position, in: $0, &$1, &$2) }
        totalCost -= slots[position].cost
        let value = slots[position].value
        slots[position].value = nil
        freeSlots.append(position)
        return value
    }

    /// Forgets every entry and gives their memory back.
    package mutating func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        positions.removeAll()
        newest = -1
        oldest = -1
        totalCost = 0
    }

    /// Runs `body` on the slots' storage and the list's ends: a relink then checks the array's
    /// uniqueness once, not at each of its writes (a hit relinks).
    private mutating func withLinks(_ body: (UnsafeMutableBufferPointer<Slot>, inout Int, inout Int) -> Void) {
        var (newest, oldest) = (self.newest, self.oldest)
        slots.withUnsafeMutableBufferPointer { body($0, &newest, &oldest) }
        (self.newest, self.oldest) = (newest, oldest)
    }

    private static func unlink(
        _ position: Int, in slots: UnsafeMutableBufferPointer<Slot>, _ newest: inout Int, _ oldest: inout Int
    ) {
        let newer = slots[position].newer
        let older = slots[position].older
        if newer >= 0 { slots[newer].older = older } else { newest = older }
        if older >= 0 { slots[older].newer = newer } else { oldest = newer }
        slots[position].newer = -1
        slots[position].older = -1
    }

    private static func linkAsNewest(
        _ position: Int, in slots: UnsafeMutableBufferPointer<Slot>, _ newest: inout Int, _ oldest: inout Int
    ) {
        slots[position].older = newest
        slots[position].newer = -1
        if newest >= 0 { slots[newest].newer = position }
        newest = position
        if oldest < 0 { oldest = position }
    }
}
