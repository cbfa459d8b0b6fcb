import Foundation

/// One record type's cache in one database: records by rowid, least recently used first out once their
/// cost passes the limit. Not locked itself: ``RecordCacheRegistry`` guards every call with its lock.
///
/// Entries live in an array of slots linked into a recency list by index (no node objects, no
/// reference counting per hit); freed slots are reused.
final class RecordCacheStore {
    private struct Slot {
        var rowID: Int64
        var record: any Sendable
        var cost: Int
        /// The first commit count at which the record is known current: readers placed earlier miss.
        var validFrom: UInt64
        var newer = -1
        var older = -1
    }

    /// The table's name, lower-cased, to match change sets.
    let table: String
    let level: RecordCacheLevel
    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var index: [Int64: Int] = [:]
    private var newest = -1
    private var oldest = -1
    private(set) var totalCost = 0
    /// The commit count at which a commit last changed this table (or everything was dropped): a record
    /// read at an earlier snapshot may be stale and is not stored.
    private(set) var changedAt: UInt64 = 0

    init(table: String, level: RecordCacheLevel) {
        self.table = table.lowercased()
        self.level = level
    }

    var count: Int { index.count }

    /// The record cached for `rowID`, if one is current for a snapshot that saw `commits` commits.
    func record(rowID: Int64, commits: UInt64) -> (any Sendable)? {
        guard let position = index[rowID], slots[position].validFrom <= commits else { return nil }
        if position != newest {
            unlink(position)
            linkAsNewest(position)
        }
        return slots[position].record
    }

    /// Stores `record`, read by a snapshot that saw `commits` commits, unless the table changed since.
    func store(_ record: any Sendable, rowID: Int64, cost: Int, commits: UInt64) {
        guard changedAt <= commits, cost <= level.costLimit else { return }
        remove(rowID: rowID)
        let slot = Slot(rowID: rowID, record: record, cost: cost, validFrom: changedAt)
        let position: Int
        if let free = freeSlots.popLast() {
            slots[free] = slot
            position = free
        } else {
            slots.append(slot)
            position = slots.count - 1
        }
        index[rowID] = position
        linkAsNewest(position)
        totalCost += cost
        while totalCost > level.costLimit, oldest >= 0 { remove(rowID: slots[oldest].rowID) }
    }

    /// Forgets the given rows, changed by the commit that made the count `commits`.
    func invalidate(rowIDs: some Sequence<Int64>, at commits: UInt64) {
        changedAt = max(changedAt, commits)
        for rowID in rowIDs { remove(rowID: rowID) }
    }

    /// Forgets everything (a whole-database change, a rekey, close) as of `commits`.
    func removeAll(at commits: UInt64) {
        changedAt = max(changedAt, commits)
        slots.removeAll()
        freeSlots.removeAll()
        index.removeAll()
        newest = -1
        oldest = -1
        totalCost = 0
    }

    private func remove(rowID: Int64) {
        guard let position = index.removeValue(forKey: rowID) else { return }
        unlink(position)
        totalCost -= slots[position].cost
        slots[position].record = ()
        freeSlots.append(position)
    }

    private func unlink(_ position: Int) {
        let slot = slots[position]
        if slot.newer >= 0 { slots[slot.newer].older = slot.older } else { newest = slot.older }
        if slot.older >= 0 { slots[slot.older].newer = slot.newer } else { oldest = slot.newer }
        slots[position].newer = -1
        slots[position].older = -1
    }

    private func linkAsNewest(_ position: Int) {
        slots[position].older = newest
        slots[position].newer = -1
        if newest >= 0 { slots[newest].newer = position }
        newest = position
        if oldest < 0 { oldest = position }
    }
}
