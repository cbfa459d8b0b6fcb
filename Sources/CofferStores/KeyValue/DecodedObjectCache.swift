import CofferEngine
import CofferRecords
import Foundation

/// An in-memory, cost-bounded LRU cache of decoded values, one per ``KeyValueStore``.
///
/// A hit is one lock, one hash lookup and a relink in a ``CostBoundedLRU``: no SQLite, no decoding.
///
/// Staleness under concurrency. A reader that misses reads the database and then inserts what it
/// decoded. If a write commits in between, the reader's snapshot may predate it, and inserting would
/// resurrect the old value. So a write bumps ``generation`` when it starts (``beginWrite()``) and again
/// when it has committed and removed the keys it touched (``endWrite(_:)``); a reader notes the
/// generation *before* opening its snapshot and inserts only if it is unchanged and no write is under
/// way. A reader whose snapshot predates a commit therefore always sees a newer generation — and two
/// readers on either side of a commit that has not yet been announced cannot both insert, which would let
/// the older value replace the newer one after a reader had seen the newer.
final class DecodedObjectCache: @unchecked Sendable {
    /// A cache key: the item's bucket and key, compared byte for byte like SQLite does.
    ///
    /// Swift's `String` equality is canonical equivalence ("é" == "e\u{301}"), but the table holds two
    /// distinct items for those keys; comparing UTF-8 bytes keeps the cache from mixing them up.
    struct Key: Hashable, Sendable {
        let bucket: String
        let key: String

        static func == (lhs: Key, rhs: Key) -> Bool {
            sameBytes(lhs.key, rhs.key) && sameBytes(lhs.bucket, rhs.bucket)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(bucket.utf8.count)
            Self.combine(bucket, into: &hasher)
            Self.combine(key, into: &hasher)
        }

        // Native strings store contiguous UTF-8: hash and compare it in bulk, byte by byte only for
        // bridged strings. (A cache hit is dominated by these two calls.)
        private static func combine(_ string: String, into hasher: inout Hasher) {
            let hashed: Void? = string.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            if hashed == nil {
                for byte in string.utf8 { hasher.combine(byte) }
            }
        }

        private static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
            guard lhs.utf8.count == rhs.utf8.count else { return false }
            let compared = lhs.utf8.withContiguousStorageIfAvailable { left in
                rhs.utf8.withContiguousStorageIfAvailable { right in
                    guard let leftBase = left.baseAddress, let rightBase = right.baseAddress else { return left.isEmpty }
                    return memcmp(leftBase, rightBase, left.count) == 0
                }
            }
            return (compared ?? nil) ?? lhs.utf8.elementsEqual(rhs.utf8)
        }
    }

    private struct Entry {
        let value: any Sendable
        let expiresAt: Date?
    }

    /// The total cost the cache keeps; 0 disables it.
    let costLimit: Int
    private let lock = NSLock()
    // Guarded by `lock`, like everything below.
    @exclusivity(unchecked) private var entries: CostBoundedLRU<Key, Entry>
    private var currentGeneration: UInt64 = 0
    /// Writes between ``beginWrite()`` and ``endWrite(_:)``: while any runs, nothing is inserted.
    private var writesInFlight = 0
    /// False while other processes' commits may have gone unnoticed (see ``followExternalChanges(_:)``):
    /// hits are then misses, and `checkRequester` is asked for a look.
    private var externalChangesChecked = true
    private var checkRequested = false
    private var checkRequester: (@Sendable () -> Void)?

    init(costLimit: Int) {
        self.costLimit = max(0, costLimit)
        self.entries = CostBoundedLRU(costLimit: costLimit)
    }

    /// The write generation; see the type's discussion.
    var generation: UInt64 { lock.withLock { currentGeneration } }

    /// The number of cached values.
    var count: Int { lock.withLock { entries.count } }

    /// The cached value for `key` unless it expired by `now`; marks it most recently used.
    func value(for key: Key, now: Date) -> (any Sendable)? {
        guard costLimit > 0 else { return nil }
        var requester: (@Sendable () -> Void)?
        defer { requester?() }
        return lock.withLock {
            guard externalChangesChecked else {
                // One request until the answer: many misses share it.
                if !checkRequested {
                    checkRequested = true
                    requester = checkRequester
                }
                return nil
            }
            guard let entry = entries.use(key) else { return nil }
            if let expiresAt = entry.expiresAt, expiresAt <= now {
                entries.removeValue(for: key)
                return nil
            }
            return entry.value
        }
    }

    /// Caches `value` unless a write happened since `generation` was read, or it costs more than the limit.
    func insert(_ value: any Sendable, cost: Int, expiresAt: Date?, for key: Key, ifGeneration generation: UInt64) {
        let cost = max(1, cost)
        guard costLimit > 0, cost <= costLimit else { return }
        lock.withLock {
            guard generation == currentGeneration, writesInFlight == 0 else { return }
            entries.insert(Entry(value: value, expiresAt: expiresAt), for: key, cost: cost)
        }
    }

    /// Serves hits only while other processes' commits have been looked for recently: until
    /// ``externalChangesWereChecked(_:)`` says so, a hit is a miss (read from the database, which is
    /// current) and calls `requester`, which should look and then call it.
    func followExternalChanges(_ requester: @escaping @Sendable () -> Void) {
        lock.withLock {
            checkRequester = requester
            externalChangesChecked = false
        }
    }

    /// Records whether other processes' commits have been looked for recently enough to serve hits.
    func externalChangesWereChecked(_ checked: Bool) {
        lock.withLock {
            externalChangesChecked = checked
            if checked { checkRequested = false }
        }
    }

    /// Call before a write transaction starts; pair with ``endWrite(_:)`` whether it commits or fails.
    func beginWrite() {
        lock.withLock {
            currentGeneration &+= 1
            writesInFlight += 1
        }
    }

    /// Forgets what the write touched (or everything) once it has committed or failed.
    ///
    /// One critical section: between ending the write and invalidating, a reader that noted the
    /// generation during the write could otherwise insert a value from before the commit.
    func endWrite(_ invalidation: CacheInvalidation) {
        lock.withLock {
            writesInFlight -= 1
            invalidateLocked(invalidation)
        }
    }

    /// Forgets `keys` (or everything) and starts a new generation.
    func invalidate(_ invalidation: CacheInvalidation) {
        lock.withLock { invalidateLocked(invalidation) }
    }

    /// ``invalidate(_:)``'s work; the caller holds `lock`.
    private func invalidateLocked(_ invalidation: CacheInvalidation) {
        currentGeneration &+= 1
        if invalidation.all {
            entries.removeAll()
        } else {
            for key in invalidation.keys { entries.removeValue(for: key) }
        }
    }
}

/// What a write changed, for the cache: some keys, or possibly anything.
struct CacheInvalidation: Sendable {
    var keys: Set<DecodedObjectCache.Key> = []
    var all = false

    static let everything = CacheInvalidation(keys: [], all: true)
}
