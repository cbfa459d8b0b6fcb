internal import Atomics
import Foundation

/// Per-connection setup that a higher layer asks for after the database opened, applied lazily: each
/// connection runs the current step before its next read or write transaction (outside any
/// transaction, where `ATTACH` is allowed) when it has not run this generation of it yet.
///
/// CofferRecords' live migrations use it to attach a source file and create the union view on every
/// connection (see `LiveMigration`); changing what the step does is ``invalidate()``: every connection
/// runs it again at its next use. Checking costs one atomic load and a comparison per transaction; the
/// lock is taken only when a connection has a step to run.
package final class ConnectionSetup: @unchecked Sendable {
    private let lock = NSLock()
    /// Changed under `lock`, read without it by ``prepare(_:)``'s fast path.
    private let generation = ManagedAtomic<Int>(0)
    // Guarded by `lock`.
    private var step: (@Sendable (Connection) throws -> Void)?
    private var attachmentObject: AnyObject?

    init() {}

    /// Installs the step every connection runs before its next use (replacing any other).
    package func install(_ step: @escaping @Sendable (Connection) throws -> Void) {
        lock.withLock {
            self.step = step
            generation.wrappingIncrement(ordering: .releasing)
        }
    }

    /// Makes every connection run the step again before its next use.
    package func invalidate() { lock.withLock { generation.wrappingIncrement(ordering: .releasing) } }

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
        guard connection.setupGeneration != generation.load(ordering: .acquiring) else { return }
        let (current, step) = lock.withLock { (generation.load(ordering: .relaxed), self.step) }
        try step?(connection)
        connection.setupGeneration = current
    }
}
