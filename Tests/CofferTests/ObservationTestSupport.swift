import Coffer
import CofferTestSupport
import Dispatch
import Foundation
import XCTest

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
