import Coffer
import Foundation
import Logging

/// What a capturing logger received: level, message and metadata of each event.
final class CapturedLog: @unchecked Sendable {
    struct Entry {
        let level: Logger.Level
        let message: String
        let metadata: Logger.Metadata
    }

    private let lock = NSLock()
    private var storage: [Entry] = []

    func append(_ entry: Entry) { lock.withLock { storage.append(entry) } }
    var entries: [Entry] { lock.withLock { storage } }

    /// A logger that records every event at `level` or above here.
    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "coffer-test") { _ in CapturingHandler(log: self) }
        logger.logLevel = level
        return logger
    }
}

private struct CapturingHandler: LogHandler {
    let log: CapturedLog
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        log.append(.init(level: event.level, message: "\(event.message)", metadata: event.metadata ?? [:]))
    }
}

/// Traced statements, collected from ``Monitoring/onStatement`` on whichever thread ran them.
final class TraceCollector: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [StatementTrace] = []

    func append(_ trace: StatementTrace) { lock.withLock { storage.append(trace) } }
    var traces: [StatementTrace] { lock.withLock { storage } }
    func clear() { lock.withLock { storage.removeAll() } }
}
