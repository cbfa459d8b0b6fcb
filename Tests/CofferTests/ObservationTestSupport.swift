import Coffer
import Dispatch
import Foundation
import XCTest

/// Collects what an observation delivers and lets a test wait for a condition on it.
final class ObservedValues<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var storage: [Value] = []
    private var fetches = 0

    var values: [Value] { condition.withLock { storage } }
    var fetchCount: Int { condition.withLock { fetches } }

    func append(_ value: Value) {
        condition.withLock {
            storage.append(value)
            condition.broadcast()
        }
    }

    func noteFetch() {
        condition.withLock {
            fetches += 1
            condition.broadcast()
        }
    }

    /// Waits (up to `timeout` seconds) until `predicate` holds for the values and the fetch count.
    @discardableResult
    func wait(timeout: TimeInterval = 10, until predicate: ([Value], Int) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(storage, fetches) {
            if !condition.wait(until: deadline) { return predicate(storage, fetches) }
        }
        return true
    }
}

/// Collects the change sets of `database.changes(in:)` on a task.
final class CollectedChanges: @unchecked Sendable {
    private let observed = ObservedValues<DatabaseChangeSet>()
    private var task: Task<Void, Never>?

    init(_ stream: AsyncStream<DatabaseChangeSet>) {
        let observed = self.observed
        task = Task {
            for await change in stream { observed.append(change) }
        }
    }

    deinit { task?.cancel() }

    /// Waits for `count` change sets and returns those received.
    func wait(for count: Int, timeout: TimeInterval = 10) -> [DatabaseChangeSet] {
        observed.wait(timeout: timeout) { values, _ in values.count >= count }
        return observed.values
    }

    var received: [DatabaseChangeSet] { observed.values }
}
