import CofferEngine
import Foundation

extension Database {
    /// ``vacuum(batchRows:progress:)`` as a sequence of progress events (pages written to the new file of
    /// the pages it is expected to hold), ending with `.finished(report)`. It starts at once, on a
    /// background thread.
    ///
    /// Stop iterating (cancel the task, or `break`) during the copy to stop the vacuum: its statements are
    /// interrupted, the partial copy is removed and the database is left exactly as it was. Once the copy
    /// is complete, the swap into place runs to its end.
    ///
    /// ```swift
    /// for try await event in database.vacuumWithProgress() {
    ///     switch event {
    ///     case .progress(let written, let expected): print("\(written)/\(expected) pages")
    ///     case .finished(let report): print("\(report.pagesBefore) → \(report.pagesAfter) pages")
    ///     }
    /// }
    /// ```
    public func vacuumWithProgress(batchRows: Int = 2000) -> AsyncThrowingStream<ProgressEvent<VacuumReport>, any Error> {
        progressStream { control in
            try self.vacuum(
                batchRows: batchRows,
                progress: { control.progress(completed: $0.pagesWritten, total: $0.pagesExpected) }, control: control)
        }
    }
}
