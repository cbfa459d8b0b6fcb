import Foundation

/// Per-connection setup that a higher layer asks for after the database opened, applied lazily: each
/// connection runs the current step before its next read or write transaction (outside any
/// transaction, where `ATTACH` is allowed) when it has not run this generation of it yet.
///
/// CofferRecords' live migrations use it to attach a source file and create the union view on every
/// connection (see `LiveMigration`); changing what the step does is ``invalidate()``: every connection
/// runs it again at its next use. Checking costs one lock and a comparison per transaction.
package final class ConnectionSetup: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var generation = 0
    private var step: (@Sendable (Connection) throws -> Void)?
    private var attachmentObject: AnyObject?

    init() {}

    /// Installs the step every connection runs before its next use (replacing any other).
    package func install(_ step: @escaping @Sendable (Connection) throws -> Void) {
        lock.withLock {
            self.step = step
            generation += 1
        }
    }

    /// Makes every connection run the step again before its next use.
    package func invalidate() { lock.withLock { generation += 1 } }

    /// The object the installing layer keeps its state in, created once by `make`.
    package func attachment<A: AnyObject>(_ make: () -> A) -> A? {
        lock.withLock {
            if let existing = attachmentObject { return existing as? A }
            let made = make()
            attachmentObject = made
            return made
        }
    }

    /// Runs the step on `connection` unless it already ran this generation of it.
    package func prepare(_ connection: Connection) throws {
        let (current, step) = lock.withLock { (generation, self.step) }
        guard connection.setupGeneration != current else { return }
        try step?(connection)
        connection.setupGeneration = current
    }
}
