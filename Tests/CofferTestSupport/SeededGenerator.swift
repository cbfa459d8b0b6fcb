// SeededGenerator — the one seedable generator of the tests, the corruption injector (CofferCorruption,
// `coffer-corrupt`) and coffer-bench.
//
// SplitMix64 (Steele, Lea, Flood 2014): a 64-bit state advanced by a fixed odd constant and mixed by two
// multiply-xorshift rounds. It is tiny, has no platform dependence, and the same seed gives the same stream
// on every machine and Swift version — which `SystemRandomNumberGenerator` and the standard library's
// `random(in:using:)` algorithms do not promise. So a randomized test, a damage (input file, kind, seed,
// count) or a benchmark's lookups replay from their seed alone.

/// A small, seedable generator (SplitMix64), so randomized runs replay the same choices from their seed.
///
/// ```swift
/// var generator = SeededGenerator(seed: 42)
/// let page = generator.int(in: 2...100)
/// ```
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// Creates a generator whose stream depends only on `seed`.
    public init(seed: UInt64) { state = seed }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A value in `0..<bound`.
    public mutating func next(upTo bound: Int) -> Int { Int(next() % UInt64(max(bound, 1))) }

    /// A value in `range` (modulo reduction; the bias is below 2^-40 for the ranges the injector uses).
    public mutating func int(in range: ClosedRange<Int>) -> Int {
        let width = UInt64(range.upperBound - range.lowerBound) &+ 1
        guard width != 0 else { return Int(truncatingIfNeeded: next()) }
        return range.lowerBound + Int(next() % width)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<max(0, count)).map { _ in UInt8(truncatingIfNeeded: next()) }
    }

    /// A random non-zero byte (an XOR mask that always changes the byte it is applied to).
    public mutating func nonZeroByte() -> UInt8 { UInt8(int(in: 1...255)) }

    /// `count` distinct elements of `pool`, in the order drawn (fewer if the pool is smaller).
    public mutating func sample<T>(_ pool: [T], count: Int) -> [T] {
        var remaining = pool
        var chosen: [T] = []
        while chosen.count < count, !remaining.isEmpty {
            chosen.append(remaining.remove(at: int(in: 0...(remaining.count - 1))))
        }
        return chosen
    }
}
