/// Positions by `Int64` key (rowids, integer foreign keys): an open-addressing table with linear probing,
/// for lookups on hot paths where `Dictionary` would hash each key with SipHash (about 150 instructions
/// a lookup, against about 20 here).
///
/// The hash is a multiply-and-shift mix of the key with a seed drawn per table, so the keys of a file
/// cannot be chosen to collide in every process. Deletion shifts the following entries back (no
/// tombstones). At most three quarters full; it doubles when fuller.
struct IntegerKeyIndex: CostBoundedLRUIndex {
    private struct Bucket {
        var key: Int64
        /// -1 when the bucket is empty.
        var position: Int
    }

    private var buckets: [Bucket] = []
    /// 64 minus the base-2 logarithm of the bucket count: a hash's top bits pick its home bucket.
    private var shift: UInt64 = 64
    private let seed = UInt64.random(in: .min ... .max)
    /// The number of keys kept.
    private(set) var count = 0

    init() {}

    /// About two buckets per key (the table is between three eighths and three quarters full).
    static var bytesPerEntry: Int { 2 * MemoryLayout<Bucket>.stride }

    /// The position kept for `key`.
    subscript(key: Int64) -> Int? {
        guard count > 0 else { return nil }
        return buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = home(of: key)
            while true {
                let entry = buckets[bucket]
                if entry.position < 0 { return nil }
                if entry.key == key { return entry.position }
                bucket = (bucket + 1) & mask
            }
        }
    }

    /// Keeps `position` for `key`, replacing what was kept.
    mutating func set(_ position: Int, for key: Int64) {
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        let mask = buckets.count - 1
        var bucket = home(of: key)
        while buckets[bucket].position >= 0 {
            if buckets[bucket].key == key {
                buckets[bucket].position = position
                return
            }
            bucket = (bucket + 1) & mask
        }
        buckets[bucket] = Bucket(key: key, position: position)
        count += 1
    }

    /// Forgets `key`; returns the position kept for it.
    mutating func removeValue(forKey key: Int64) -> Int? {
        guard count > 0 else { return nil }
        let mask = buckets.count - 1
        var hole = home(of: key)
        while buckets[hole].key != key || buckets[hole].position < 0 {
            if buckets[hole].position < 0 { return nil }
            hole = (hole + 1) & mask
        }
        let removed = buckets[hole].position
        // Moves back each following entry of the run whose home bucket is not between the hole and it.
        var next = hole
        while true {
            next = (next + 1) & mask
            guard buckets[next].position >= 0 else { break }
            let wanted = home(of: buckets[next].key)
            let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !staysPut {
                buckets[hole] = buckets[next]
                hole = next
            }
        }
        buckets[hole].position = -1
        count -= 1
        return removed
    }

    /// Forgets every key and gives the table's memory back.
    mutating func removeAll() {
        buckets = []
        shift = 64
        count = 0
    }

    private func home(of key: Int64) -> Int {
        var mixed = UInt64(bitPattern: key) ^ seed
        mixed = (mixed ^ (mixed >> 32)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> shift)
    }

    private mutating func grow() {
        let old = buckets
        let capacity = max(8, old.count * 2)
        buckets = Array(repeating: Bucket(key: 0, position: -1), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        for entry in old where entry.position >= 0 { set(entry.position, for: entry.key) }
    }
}
