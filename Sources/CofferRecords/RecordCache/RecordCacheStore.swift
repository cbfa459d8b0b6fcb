import CofferEngine
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

/// One record type's cache in one database: its records by rowid in ``RecordCacheEntries`` (evicted
/// in second-chance order once their cost passes the type's limit), and the type's primary-key lookup
/// for misses.
///
/// One lock guards the store; a hit holds it for one probe of the entries' index (and marks the entry
/// used the first time after eviction passed it). Connections keep their stores (see
/// ``Connection/recordCacheStore(_:)``), so a hit takes no other lock.
@usableFromInline
final class RecordCacheStore<Record: CachedRecord>: RecordCacheStoring, @unchecked Sendable {
    let table: String
    /// The type's primary-key lookup.
    let lookup: RecordLookup
    /// False when the type is not cached (level ``RecordCacheLevel/none``, or a key that is no rowid):
    /// its lookups run SQL.
    @usableFromInline let isEnabled: Bool
    @usableFromInline let lock = NSLock()
    // Guarded by `lock` (the lock, not the dynamic exclusivity check, keeps accesses apart). Usable from
    // inlinable code for the hit alone (``record(rowID:commits:)``).
    @usableFromInline @exclusivity(unchecked) var entries: RecordCacheEntries
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
        self.entries = RecordCacheEntries(costLimit: level.costLimit)
    }

    /// The bytes an entry takes besides its record's heap storage (strings, data): its index bucket and
    /// queue slot, and the entry object (a 16-byte header, four words and the mark, then the record).
    static var bytesPerEntry: Int {
        let alignment = MemoryLayout<Record>.alignment
        let fields = (16 + 4 * 8 + 1 + alignment - 1) / alignment * alignment
        return RecordCacheEntries.bytesPerEntry + fields + MemoryLayout<Record>.size
    }

    /// The record cached for `rowID`, if one is current for a snapshot that saw `commits` commits,
    /// copied out under the lock. Inlinable, so that a hit is specialized for the record type in the
    /// caller's module: the probe, the mark and the copy inline, no call but the lock's, and the entry
    /// read in place, not returned (no reference counting of it).
    @inlinable
    func record(rowID: Int64, commits: UInt64) -> Record? {
        lock.lock()
        defer { lock.unlock() }
        guard let entry = entries.use(rowID), entry.validFrom <= commits else { return nil }
        return unsafeDowncast(entry, to: RecordCacheEntry<Record>.self).record
    }

    /// Stores `record`, read by a snapshot that saw `commits` commits, unless the table changed since.
    func store(_ record: Record, rowID: Int64, cost: Int, commits: UInt64) {
        lock.withLock {
            guard changedAt <= commits else { return }
            entries.insert(RecordCacheEntry(record: record, rowID: rowID, cost: cost, validFrom: changedAt))
        }
    }

    func invalidate(rowIDs: [Int64], at commits: UInt64) {
        lock.withLock {
            changedAt = max(changedAt, commits)
            for rowID in rowIDs { entries.remove(rowID) }
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
