import Dispatch
import Foundation
import Logging

/// Times the waits of operations queued for the writer (``Monitoring/writerWaits`` and the wait metrics)
/// and names, for a wait over the threshold, the operation that held the writer.
final class WriterWaitTrace: Sendable {
    /// Waits this long or longer are logged; nil: none is.
    private let thresholdNanoseconds: UInt64?
    private let logger: Logger
    private let metrics: DatabaseMetrics?
    /// A wait shorter than this is the queue's own hand-over, not a wait behind another operation.
    private static let countedWaitNanoseconds: UInt64 = 1_000_000

    /// The wait trace `monitoring` asks for, or nil when neither the wait trace nor metrics are on.
    static func make(for monitoring: Monitoring, logger: Logger, metrics: DatabaseMetrics?) -> WriterWaitTrace? {
        var threshold: UInt64?
        if case .slow(let seconds) = monitoring.writerWaits { threshold = UInt64(max(0, seconds) * 1e9) }
        guard threshold != nil || metrics != nil else { return nil }
        return WriterWaitTrace(thresholdNanoseconds: threshold, logger: logger, metrics: metrics)
    }

    private init(thresholdNanoseconds: UInt64?, logger: Logger, metrics: DatabaseMetrics?) {
        self.thresholdNanoseconds = thresholdNanoseconds
        self.logger = logger
        self.metrics = metrics
    }

    /// `operation`, which asked for the writer at `asked` (`DispatchTime` nanoseconds), got it after
    /// `holder` let it go.
    func operation(_ operation: StaticString, waitedSince asked: UInt64, behind holder: StaticString) {
        let now = DispatchTime.now().uptimeNanoseconds
        let waited = now > asked ? now - asked : 0
        if let metrics {
            metrics.writerWaitDuration.recordNanoseconds(Int64(clamping: waited))
            if waited >= Self.countedWaitNanoseconds { metrics.writerWaits.increment() }
        }
        guard let thresholdNanoseconds, waited >= thresholdNanoseconds else { return }
        logger.notice(
            "waited for the writer",
            metadata: [
                "waiting": "\(operation)", "holder": "\(holder)",
                "waited_ms": "\(String(format: "%.1f", Double(waited) / 1e6))",
            ])
    }
}
