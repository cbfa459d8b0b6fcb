import Foundation

/// Collects what an observation delivers (values, and fetches when the fetch closure notes them) and lets
/// a test wait for a condition on it.
public final class ObservedValues<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var storage: [Value] = []
    private var fetches = 0

    public init() {}

    public var values: [Value] { condition.withLock { storage } }
    public var fetchCount: Int { condition.withLock { fetches } }

    public func append(_ value: Value) {
        condition.withLock {
            storage.append(value)
            condition.broadcast()
        }
    }

    public func noteFetch() {
        condition.withLock {
            fetches += 1
            condition.broadcast()
        }
    }

    /// Waits (up to `timeout` seconds) until `predicate` holds for the values and the fetch count.
    @discardableResult
    public func wait(timeout: TimeInterval = 10, until predicate: ([Value], Int) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(storage, fetches) {
            if !condition.wait(until: deadline) { return predicate(storage, fetches) }
        }
        return true
    }
}
