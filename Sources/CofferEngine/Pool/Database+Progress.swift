import Foundation

/// One event of long work reported as it runs, as an `AsyncSequence` (see ``Database``'s
/// `backupWithProgress(to:kind:pagesPerStep:)` and `vacuumWithProgress(batchRows:)`).
///
/// ```swift
/// for try await event in database.vacuumWithProgress() {
///     switch event {
///     case .progress(let completed, let total): print("\(completed)/\(total) pages")
///     case .finished(let report): print("\(report.pagesBefore) → \(report.pagesAfter) pages")
///     }
/// }
/// ```
public enum ProgressEvent<Result: Sendable>: Sendable {
    /// `completed` of `total` units (pages) done so far; `total` may move as the work learns more.
    case progress(completed: Int, total: Int)
    /// The work is done: what it produced. Always the last event.
    case finished(Result)
}

/// What long work checks and reports to while it runs: whether its consumer went away (or its task was
/// cancelled), and its progress.
package final class WorkControl: @unchecked Sendable {
    /// Cancelled when the consumer stops; attach a connection to it to interrupt that connection's statements.
    package let latch = CancellationLatch()
    private let report: @Sendable (Int, Int) -> Void

    init(report: @escaping @Sendable (Int, Int) -> Void) { self.report = report }

    /// Reports `completed` of `total` units.
    package func progress(completed: Int, total: Int) { report(completed, total) }

    /// Throws `CancellationError` once the consumer stopped.
    package func checkCancellation() throws {
        if latch.isCancelled { throw CancellationError() }
    }
}

extension Database {
    /// Runs `work` at once on a background thread and returns its progress as a sequence that ends with
    /// `.finished(result)`, or throws its error. When the consumer stops iterating (its task is cancelled,
    /// or it breaks out of the loop) the control is cancelled: `work` stops at its next check.
    package func progressStream<R: Sendable>(
        _ work: @escaping @Sendable (WorkControl) throws -> R
    ) -> AsyncThrowingStream<ProgressEvent<R>, any Error> {
        Self.progressStream(work)
    }

    /// ``progressStream(_:)`` for work that needs no open database (a restore).
    package static func progressStream<R: Sendable>(
        _ work: @escaping @Sendable (WorkControl) throws -> R
    ) -> AsyncThrowingStream<ProgressEvent<R>, any Error> {
        let (stream, continuation) = AsyncThrowingStream<ProgressEvent<R>, any Error>.makeStream(
            bufferingPolicy: .bufferingNewest(64))
        let control = WorkControl { completed, total in continuation.yield(.progress(completed: completed, total: total)) }
        continuation.onTermination = { termination in
            if case .cancelled = termination { control.latch.cancel() }
        }
        DispatchQueue.global(qos: .utility).async {
            do {
                let result = try work(control)
                continuation.yield(.finished(result))
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        return stream
    }
}
