import Foundation

/// Fires the configuration's corruption handler once per database.
package final class CorruptionReporter: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = false
    private let path: String
    private let handler: (@Sendable (CorruptionEvent) -> Void)?

    init(path: String, handler: (@Sendable (CorruptionEvent) -> Void)?) {
        self.path = path
        self.handler = handler
    }

    func report(_ error: CofferError) {
        guard error.isCorruption, let handler else { return }
        let first = lock.withLock { () -> Bool in
            defer { fired = true }
            return !fired
        }
        if first { handler(CorruptionEvent(path: path, sql: error.sql, error: error)) }
    }
}
