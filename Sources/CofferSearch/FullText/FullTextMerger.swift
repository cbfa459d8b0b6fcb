import CofferEngine
import CofferRecords
import Dispatch
import Foundation

/// Merges a full-text index's segments in the background, between the app's transactions (WCDB's
/// auto-merge), so that neither commits nor queries pay for it.
///
/// Every `interval` seconds (the first time `interval` seconds after it starts) a reader checks whether some level of the index holds `minimumSegments`
/// segments (a read, no lock on writers); only then does it queue short write transactions on the
/// writer, one merge step of `pagesPerStep` pages each, until no work is left. Each step is its own
/// transaction, so the app's writes interleave with them and no commit waits for a whole merge.
///
/// ```swift
/// let merger = FullTextMerger(database: database, index: Message.fullTextIndex)
/// // … the app runs; call merger.stop() before closing the database.
/// ```
public final class FullTextMerger: Sendable {
    private let queue = DispatchQueue(label: "coffer.fulltext-merger", qos: .utility)
    private let state = Mutex()
    private let step: @Sendable () throws -> Bool
    private let needsWork: @Sendable () throws -> Bool
    private let interval: TimeInterval
    private let onPass: (@Sendable (Result<Int, any Error>) -> Void)?

    /// Starts merging `index` of `database` in the background.
    ///
    /// - Parameters:
    ///   - pagesPerStep: pages written by one merge step (one write transaction).
    ///   - minimumSegments: a level is merged once it holds this many segments.
    ///   - interval: seconds between two background passes.
    ///   - onPass: called on the merger's queue after each background pass, with the number of steps
    ///     that merged something, or the error that stopped the pass (for logs and tests).
    public init<Root: TableRecord>(
        database: Database, index: FullTextIndex<Root>, pagesPerStep: Int = 200, minimumSegments: Int = 8,
        interval: TimeInterval = 1, onPass: (@Sendable (Result<Int, any Error>) -> Void)? = nil
    ) {
        self.interval = interval
        self.onPass = onPass
        self.step = { try database.write { try index.merge($0, pages: pagesPerStep, minimumSegments: minimumSegments) } }
        self.needsWork = { try database.read { try index.needsMerge($0, minimumSegments: minimumSegments) } }
        schedule(after: interval)
    }

    /// Stops merging; a step under way finishes first. Safe to call twice.
    public func stop() {
        state.withLock { $0.stopped = true }
        queue.sync {}
    }

    /// Runs merge steps now until no work is left, on the caller's thread (tests, or an app about to
    /// go idle). Returns the number of steps that merged something.
    @discardableResult
    public func mergeUntilDone() throws -> Int {
        var steps = 0
        while try needsWork(), try step() { steps += 1 }
        return steps
    }

    /// The error of the last background pass that failed, if any (the next pass tries again).
    public var lastError: (any Error)? { state.withLock { $0.lastError } }

    private func schedule(after delay: TimeInterval) {
        queue.asyncAfter(deadline: .now() + delay) { [weak self] in
            guard let self, !self.state.withLock({ $0.stopped }) else { return }
            do {
                let steps = try self.mergeUntilDone()
                self.state.withLock { $0.lastError = nil }
                self.onPass?(.success(steps))
            } catch {
                self.state.withLock { $0.lastError = error }
                self.onPass?(.failure(error))
            }
            self.schedule(after: self.interval)
        }
    }

    private struct State {
        var stopped = false
        var lastError: (any Error)?
    }

    /// The merger's state, guarded by a lock.
    private final class Mutex: @unchecked Sendable {
        private let lock = NSLock()
        private var state = State()
        func withLock<T>(_ body: (inout State) -> T) -> T { lock.withLock { body(&state) } }
    }
}
