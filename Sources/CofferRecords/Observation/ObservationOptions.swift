import CofferEngine
import Foundation

/// How a value observation delivers its values (see ``Database/observe(options:_:)``).
///
/// ```swift
/// var options = ObservationOptions()
/// options.coalescingInterval = 0.1   // at most ten fetches a second, however often the writer commits
/// options.deliversFirstValueSynchronously = true
/// ```
public struct ObservationOptions: Sendable {
    /// For `Equatable` values: skip a value equal to the last one delivered. Default true.
    public var removesDuplicates: Bool
    /// Fetches start at least this many seconds apart: a burst of commits costs one fetch per interval,
    /// the last after the burst's final commit. The first change after a quiet spell is fetched at once.
    /// Default 1/60 s.
    public var coalescingInterval: TimeInterval
    /// Whether the callback form fetches and delivers the first value on the calling thread before
    /// `observe` returns (it then runs on that thread, not on the delivery queue). Default false.
    public var deliversFirstValueSynchronously: Bool

    /// The default options.
    public init(
        removesDuplicates: Bool = true, coalescingInterval: TimeInterval = 1.0 / 60, deliversFirstValueSynchronously: Bool = false
    ) {
        self.removesDuplicates = removesDuplicates
        self.coalescingInterval = coalescingInterval
        self.deliversFirstValueSynchronously = deliversFirstValueSynchronously
    }
}

/// A running observation started with a callback; ``cancel()`` stops it (so does releasing the last
/// reference to it).
public final class ObservationHandle: Sendable {
    private let stop: @Sendable () -> Void

    init(stop: @escaping @Sendable () -> Void) { self.stop = stop }

    deinit { stop() }

    /// Stops the observation: no fetch starts afterwards, and no value is delivered after the current one.
    public func cancel() { stop() }
}
