/// Values by `Int64` key (rowids, integer foreign keys): an open-addressing table with linear probing,
/// for lookups on hot paths where `Dictionary` would hash each key with SipHash (about 150 instructions
/// a lookup, against about 20 here). Each bucket holds its key and its value side by side, so a lookup
/// reads one bucket (two on a collision) and follows no pointer.
///
/// The hash is a multiply-and-shift mix of the key with a seed drawn per table, so the keys of a file
/// cannot be chosen to collide in every process. Deletion shifts the following entries back (no
/// tombstones). At most three quarters full; it doubles when fuller.
///
/// A lookup is inlinable: the record cache's hit is specialized for its value type in the caller's
/// module (the table's internals are usable from inlinable code for that alone, and changed only here).
@usableFromInline
package struct IntegerKeyMap<Value: IntegerKeyMapValue> {
    @usableFromInline
    struct Bucket {
        @usableFromInline var key: Int64
        /// ``IntegerKeyMapValue/absent`` when the bucket is empty.
        @usableFromInline var value: Value
    }

    @usableFromInline var buckets: [Bucket] = []
    /// 64 minus the base-2 logarithm of the bucket count: a hash's top bits pick its home bucket.
    @usableFromInline var shift: UInt64 = 64
    @usableFromInline let seed = UInt64.random(in: .min ... .max)
    /// The number of keys kept.
    @usableFromInline package var count = 0

    package init() {}

    /// About two buckets per key (the table is between three eighths and three quarters full).
    package static var bytesPerEntry: Int { 2 * MemoryLayout<Bucket>.stride }

    /// The value kept for `key`, ``IntegerKeyMapValue/absent`` when none is.
    @inlinable @inline(__always)
    package func value(for key: Int64) -> Value {
        guard count > 0 else { return .absent }
        return buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = home(of: key)
            while true {
                let entry = buckets[bucket]
                if entry.value.isAbsent || entry.key == key { return entry.value }
                bucket = (bucket + 1) & mask
            }
        }
    }

    /// Keeps `value` (not ``IntegerKeyMapValue/absent``) for `key`, replacing what was kept.
    package mutating func set(_ value: Value, for key: Int64) {
        if (count + 1) * 4 > buckets.count * 3 { grow() }
        let mask = buckets.count - 1
        var bucket = home(of: key)
        while !buckets[bucket].value.isAbsent {
            if buckets[bucket].key == key {
                buckets[bucket].value = value
                return
            }
            bucket = (bucket + 1) & mask
        }
        buckets[bucket] = Bucket(key: key, value: value)
        count += 1
    }

    /// Forgets `key`; returns the value kept for it (``IntegerKeyMapValue/absent`` when none was).
    @discardableResult
    package mutating func removeValue(for key: Int64) -> Value {
        guard count > 0 else { return .absent }
        let mask = buckets.count - 1
        var hole = home(of: key)
        while buckets[hole].key != key || buckets[hole].value.isAbsent {
            if buckets[hole].value.isAbsent { return .absent }
            hole = (hole + 1) & mask
        }
        let removed = buckets[hole].value
        // Moves back each following entry of the run whose home bucket is not between the hole and it.
        var next = hole
        while true {
            next = (next + 1) & mask
            guard !buckets[next].value.isAbsent else { break }
            let wanted = home(of: buckets[next].key)
            let staysPut = hole <= next ? (hole < wanted && wanted <= next) : (hole < wanted || wanted <= next)
            if !staysPut {
                buckets[hole] = buckets[next]
                hole = next
            }
        }
        buckets[hole].value = .absent
        count -= 1
        return removed
    }

    /// Forgets every key and gives the table's memory back.
    package mutating func removeAll() {
        buckets = []
        shift = 64
        count = 0
    }

    @inlinable @inline(__always)
    func home(of key: Int64) -> Int {
        var mixed = UInt64(bitPattern: key) ^ seed
        mixed = (mixed ^ (mixed >> 32)) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> shift)
    }

    private mutating func grow() {
        let old = buckets
        let capacity = max(8, old.count * 2)
        buckets = Array(repeating: Bucket(key: 0, value: .absent), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
        count = 0
        for entry in old where !entry.value.isAbsent { set(entry.value, for: entry.key) }
    }
}

/// A value an ``IntegerKeyMap`` can keep: one of its values marks an empty bucket and is never kept.
@usableFromInline
package protocol IntegerKeyMapValue {
    /// The value that marks an empty bucket.
    static var absent: Self { get }
    /// Whether this is ``absent``.
    var isAbsent: Bool { get }
}

/// A position (an index into an array); negative values are not kept.
extension Int: IntegerKeyMapValue {
    @inlinable package static var absent: Int { -1 }
    @inlinable package var isAbsent: Bool { self < 0 }
}

/// An object reference; nil is not kept.
extension Optional: IntegerKeyMapValue where Wrapped: AnyObject {
    @inlinable package static var absent: Self { nil }
    @inlinable package var isAbsent: Bool { self == nil }
}

/// Positions by `Int64` key: the eager loads' integer key slots.
package typealias IntegerKeyIndex = IntegerKeyMap<Int>

extension IntegerKeyMap where Value == Int {
    /// The position kept for `key`.
    package subscript(key: Int64) -> Int? {
        let position = value(for: key)
        return position.isAbsent ? nil : position
    }
}
