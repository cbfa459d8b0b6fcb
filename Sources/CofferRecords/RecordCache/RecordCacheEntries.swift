import CofferEngine

/// A cached record's bookkeeping, and the first commit count at which it is known current (readers
/// placed earlier miss). The store keeps this non-generic base: its code is then specialized inside
/// Coffer, where a generic entry made every hit look up generic metadata several times (about 8,000
/// instructions a hit in unspecialized code); only the final downcast to ``RecordCacheEntry`` names the
/// record type. The record lives in the same object, after these fields: a hit reads one object.
@usableFromInline
class RecordCacheEntryBase {
    // What a hit reads comes first, next to the object's header: the stamp and the mark.
    @usableFromInline final let validFrom: UInt64
    // Guarded by the store's lock (the lock, not the dynamic exclusivity check, keeps accesses apart).
    /// Set by a hit, cleared when eviction passes the entry over (its second chance).
    @usableFromInline @exclusivity(unchecked) final var referenced = false
    final let rowID: Int64
    final let cost: Int
    /// The entry's place in ``RecordCacheEntries``' eviction queue.
    @exclusivity(unchecked) final var queuePosition = 0

    init(rowID: Int64, cost: Int, validFrom: UInt64) {
        self.rowID = rowID
        self.cost = cost
        self.validFrom = validFrom
    }
}

/// A cached record of one type (see ``RecordCacheEntryBase``).
@usableFromInline
final class RecordCacheEntry<Record>: RecordCacheEntryBase {
    @usableFromInline let record: Record
    init(record: Record, rowID: Int64, cost: Int, validFrom: UInt64) {
        self.record = record
        super.init(rowID: rowID, cost: cost, validFrom: validFrom)
    }
}

/// One store's entries by rowid, bounded by the total of their costs, evicted in second-chance (CLOCK)
/// order: the oldest inserted first, except that an entry hit since eviction last passed it is kept and
/// goes to the back of the queue with its mark cleared. Recently used entries are kept; an entry neither
/// hit nor recently inserted goes first.
///
/// A hit is one probe of the ``IntegerKeyMap`` (whose buckets hold the entries' references) and, the
/// first time after eviction passed the entry, one write of its mark: no list is relinked, so a hit
/// touches the bucket, the entry and nothing else. A value type with no lock: its store guards it.
@usableFromInline
struct RecordCacheEntries {
    /// The total cost kept; an entry costing more is not kept at all.
    let costLimit: Int
    @usableFromInline var index = IntegerKeyMap<RecordCacheEntryBase?>()
    /// The eviction queue, from `head` on: entries in the order they were inserted (or given their
    /// second chance); nil where an entry was removed.
    private var queue: [RecordCacheEntryBase?] = []
    private var head = 0
    /// The nils in `queue` after `head`.
    private var holes = 0
    /// The sum of the kept entries' costs.
    private(set) var totalCost = 0

    init(costLimit: Int) { self.costLimit = max(0, costLimit) }

    /// The number of entries kept.
    var count: Int { index.count }

    /// The bytes an entry takes besides its object: its bucket in the index and its queue slot (the queue
    /// is at most about twice as long as the entries it holds).
    static var bytesPerEntry: Int {
        IntegerKeyMap<RecordCacheEntryBase?>.bytesPerEntry + 2 * MemoryLayout<RecordCacheEntryBase?>.stride
    }

    /// The entry kept for `rowID`, marked used. Inlinable: a hit is specialized in the caller's module.
    @inlinable @inline(__always)
    mutating func use(_ rowID: Int64) -> RecordCacheEntryBase? {
        guard let entry = index.value(for: rowID) else { return nil }
        // Written only when not already set: repeated hits leave the entry's memory clean.
        if !entry.referenced { entry.referenced = true }
        return entry
    }

    /// Keeps `entry` (replacing what was kept for its rowid) at the back of the queue, then evicts until
    /// the total is within the limit. An entry costing more than the limit is not kept (and what was kept
    /// for its rowid stays).
    mutating func insert(_ entry: RecordCacheEntryBase) {
        guard entry.cost <= costLimit else { return }
        remove(entry.rowID)
        index.set(entry, for: entry.rowID)
        enqueue(entry)
        totalCost += entry.cost
        // The new entry is never evicted by its own insert (it alone fits): entries given their second
        // chance go behind it, and it goes behind them when eviction comes to it.
        while totalCost > costLimit, head < queue.count {
            let candidate = queue[head]
            queue[head] = nil
            head += 1
            guard let candidate else {
                holes -= 1
                continue
            }
            if candidate === entry {
                enqueue(candidate)
            } else if candidate.referenced {
                candidate.referenced = false
                enqueue(candidate)
            } else {
                index.removeValue(for: candidate.rowID)
                totalCost -= candidate.cost
            }
        }
        compactIfSparse()
    }

    /// Forgets `rowID`'s entry.
    mutating func remove(_ rowID: Int64) {
        guard let entry = index.removeValue(for: rowID) else { return }
        queue[entry.queuePosition] = nil
        holes += 1
        totalCost -= entry.cost
        compactIfSparse()
    }

    /// Forgets every entry and gives their memory back.
    mutating func removeAll() {
        index.removeAll()
        queue = []
        head = 0
        holes = 0
        totalCost = 0
    }

    private mutating func enqueue(_ entry: RecordCacheEntryBase) {
        entry.queuePosition = queue.count
        queue.append(entry)
    }

    /// Rebuilds the queue without its nils once they are as many as its entries (amortized constant
    /// time per removal).
    private mutating func compactIfSparse() {
        guard head + holes > max(16, queue.count / 2) else { return }
        var compacted: [RecordCacheEntryBase?] = []
        compacted.reserveCapacity(index.count)
        for case let entry? in queue[head...] {
            entry.queuePosition = compacted.count
            compacted.append(entry)
        }
        queue = compacted
        head = 0
        holes = 0
    }
}
