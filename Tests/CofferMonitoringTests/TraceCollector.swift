import Coffer
import Foundation

/// Traced statements, collected from ``Monitoring/onStatement`` on whichever thread ran them.
final class TraceCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [StatementTrace] = []

    func append(_ trace: StatementTrace) { lock.withLock { storage.append(trace) } }
    var traces: [StatementTrace] { lock.withLock { storage } }
    func clear() { lock.withLock { storage.removeAll() } }
}
