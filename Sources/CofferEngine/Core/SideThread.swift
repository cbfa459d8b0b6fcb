import Foundation

/// Work that runs on a thread of its own while the caller does something else, then hands back its value
/// or its error at ``join()``: how `Database.verify` overlaps SQLite's `integrity_check` with its own
/// page scan on a second core.
///
/// The thread has an 8 MiB stack (SQLite's checks recurse as deep as a B-tree, and Foundation's default
/// for a `Thread` is smaller). Call ``join()`` on every path, errors included, so that no work outlives
/// the call that started it.
package final class SideThread<Value: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    /// Set once, by the thread, under `condition`.
    private var outcome: Result<Value, any Error>?

    /// Starts `body` on a new thread named `name`.
    package init(name: String, _ body: @escaping @Sendable () throws -> Value) {
        let thread = Thread { [self] in
            let result = Result { try body() }
            condition.lock()
            outcome = result
            condition.broadcast()
            condition.unlock()
        }
        thread.name = name
        thread.stackSize = 8 << 20
        thread.start()
    }

    /// Waits until the work has ended; returns its value or rethrows its error.
    package func join() throws -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let outcome { return try outcome.get() }
            condition.wait()
        }
    }
}
