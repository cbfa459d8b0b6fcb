import Foundation

/// What ``RecordCacheRegistry`` needs of a store whatever its record type: forgetting and measuring.
protocol RecordCacheStoring: AnyObject, Sendable {
    /// The table's name, lower-cased, to match change sets.
    var table: String { get }
    /// Forgets the given rows, changed by the commit that made the count `commits`.
    func invalidate(rowIDs: [Int64], at commits: UInt64)
    /// Forgets everything (a whole-database change, a rekey, close) as of `commits`.
    func removeAll(at commits: UInt64)
    /// The records kept and their estimated bytes.
    var usage: (records: Int, cost: Int) { get }
}

/// A cached record and the first commit count at which it is known current (readers placed earlier
/// miss). The LRU keeps this non-generic base: its code is then specialized inside Coffer, where a generic
/// entry made every hit look up generic metadata several times (about 8,000 instructions a hit in
/// unspecialized code); only the final downcast to ``RecordCacheEntry`` names the record type.
@usableFromInline
class RecordCacheEntryBase {
    final let validFrom: UInt64
    init(validFrom: UInt64) { self.validFrom = validFrom }
}

/// A cached record of one type (see ``RecordCacheEntryBase``).
@usableFromInline
final class RecordCacheEntry<Record>: RecordCacheEntryBase {
    @usableFromInline let record: Record
    init(record: Record, validFrom: UInt64) {
        self.record = record
        super.init(validFrom: validFrom)
    }
}

/// One record type's cache in one database: its records by rowid, least recently used first out once
/// their cost passes the type's limit, and the type's primary-key lookup for misses.
///
/// One lock guards the store; a hit holds it for one lookup in an ``IntegerKeyIndex`` and a relink. Connections keep their
/// stores (see ``Connection/recordCacheStore(_:)``), so a hit takes no other lock.
@usableFromInline
final class RecordCacheStore<Record: CachedRecord>: RecordCacheStoring, @unchecked Sendable {
    let table: String
    /// The type's primary-key lookup.
    let lookup: RecordLookup
    /// False when the type is not cached (level ``RecordCacheLevel/none``, or a key that is no rowid):
    /// its lookups run SQL.
    @usableFromInline let isEnabled: Bool
    private let lock = NSLock()
    // Guarded by `lock` (the lock, not the dynamic exclusivity check, keeps accesses apart).
    @exclusivity(unchecked) private var entries: IndexedCostBoundedLRU<IntegerKeyIndex, RecordCacheEntryBase>
    /// The commit count at which a commit last changed this table (or everything was dropped): a record
    /// read at an earlier snapshot may be stale and is not stored.
    @exclusivity(unchecked) private var changedAt: UInt64

    /// A store whose table counts as changed at `changedAt` (the commits its registry applied before it).
    init(lookup: RecordLookup, changedAt: UInt64) {
        self.changedAt = changedAt
        let level = Record.recordCache
        self.table = Record.tableName.lowercased()
        self.lookup = lookup
        self.isEnabled = lookup.isCacheable && level.costLimit > 0
        self.entries = IndexedCostBoundedLRU(costLimit: level.costLimit)
    }

    /// The bytes an entry takes besides its record's heap storage (strings, data): the LRU's slot and
    /// index entry, and the entry object (a 16-byte object header, the commit count, the record).
    static var bytesPerEntry: Int {
        IndexedCostBoundedLRU<IntegerKeyIndex, RecordCacheEntryBase>.bytesPerEntry + 16 + MemoryLayout<UInt64>.stride
            + MemoryLayout<Record>.stride
    }

    /// The entry cached for `rowID`, if one is current for a snapshot that saw `commits` commits. (An
    /// entry, not an optional record: an optional of the generic record type costs a metadata lookup per
    /// call in unspecialized code.)
    @usableFromInline
    func entry(rowID: Int64, commits: UInt64) -> RecordCacheEntry<Record>? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries.use(rowID), entry.validFrom <= commits else { return nil }
        return unsafeDowncast(entry, to: RecordCacheEntry<Record>.self)
    }

    /// Stores `record`, read by a snapshot that saw `commits` commits, unless the table changed since.
    func store(_ record: Record, rowID: Int64, cost: Int, commits: UInt64) {
        lock.withLock {
            guard changedAt <= commits else { return }
            entries.insert(RecordCacheEntry(record: record, validFrom: changedAt), for: rowID, cost: cost)
        }
    }

    func invalidate(rowIDs: [Int64], at commits: UInt64) {
        lock.withLock {
            changedAt = max(changedAt, commits)
            for rowID in rowIDs { entries.removeValue(for: rowID) }
        }
    }

    func removeAll(at commits: UInt64) {
        lock.withLock {
            changedAt = max(changedAt, commits)
            entries.removeAll()
        }
    }

    var usage: (records: Int, cost: Int) { lock.withLock { (entries.count, entries.totalCost) } }
}
