import CofferEngine
import Foundation

extension Database {
    /// ``backup(to:kind:pagesPerStep:)`` as a sequence of progress events, in pages, ending with
    /// `.finished(generation)`. It starts at once, on a background thread.
    ///
    /// Stop iterating (cancel the task, or `break`) to stop the backup: the next step throws
    /// `CancellationError` into nothing, the partial file is removed, no generation is recorded, and the
    /// next backup starts from the same state as if this one had not run. A backup whose last page was
    /// copied completes.
    ///
    /// ```swift
    /// for try await event in database.backupWithProgress(to: URL(fileURLWithPath: "backups")) {
    ///     if case .progress(let copied, let total) = event { print("\(copied)/\(total) pages") }
    /// }
    /// ```
    public func backupWithProgress(
        to directory: URL, kind: BackupKind = .automatic, pagesPerStep: Int = 256
    ) -> AsyncThrowingStream<ProgressEvent<BackupGeneration>, any Error> {
        progressStream { control in try self.backup(to: directory, kind: kind, pagesPerStep: pagesPerStep, control: control) }
    }
}
