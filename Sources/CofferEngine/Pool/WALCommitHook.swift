import Foundation

/// Told about the writer's WAL commits and about a close whose checkpoint emptied the WAL. Backup's
/// changed-page tracker is one (it lets an incremental backup copy only the pages committed since the last
/// generation); the pool knows it only through this protocol.
package protocol WALCommitListener: AnyObject, Sendable {
    /// Called on the writer's thread after each commit, with the WAL's size in frames.
    func didCommit(walFrames: Int32)
    /// Called after `close()` whose TRUNCATE checkpoint emptied the WAL.
    func walEmptiedAtClose(databasePath: String)
    /// Called when every page may have changed outside the commits it heard (a rekey, a vacuum): whatever
    /// it knows of changed pages is void.
    func invalidate()
}

/// The pool's seam for whatever follows its WAL: the writer's commit hook reports here, every checkpoint
/// takes ``checkpointGate`` (the writer's opportunistic catch-up only tries it), and one listener, attached
/// on first use, hears each commit. With metrics on, it counts the frames each commit appended
/// (`coffer_pages_written`: SQLite calls the WAL hook after the COMMIT's own trace event, so the statement
/// monitor cannot).
package final class WALCommitHook: @unchecked Sendable {
    /// Held while something reads page images from the main file that no checkpoint may overwrite.
    package let checkpointGate = NSLock()
    private let metrics: DatabaseMetrics?
    private let lock = NSLock()
    // Guarded by `lock`.
    private var walFrames: Int32 = 0
    private var listener: (any WALCommitListener)?

    init(metrics: DatabaseMetrics?) { self.metrics = metrics }

    /// Called on the writer's thread after each commit, with the WAL's size in frames.
    func didCommit(walFrames frames: Int32) {
        let (listener, appended) = lock.withLock { () -> ((any WALCommitListener)?, Int32) in
            // Fewer frames than before: the WAL restarted, and this commit wrote all of them.
            let appended = frames >= walFrames ? frames - walFrames : frames
            walFrames = frames
            return (self.listener, appended)
        }
        if appended > 0, let metrics { metrics.pagesWritten.increment(by: appended) }
        listener?.didCommit(walFrames: frames)
    }

    /// The WAL's size in frames after the last commit.
    package var framesAfterLastCommit: Int32 { lock.withLock { walFrames } }

    /// Called after a close whose checkpoint emptied the WAL.
    func walEmptiedAtClose(databasePath: String) {
        lock.withLock { listener }?.walEmptiedAtClose(databasePath: databasePath)
    }

    /// Tells the listener, if one is attached, that every page may have changed (a rekey re-encrypted them,
    /// a vacuum rewrote the file).
    package func invalidateListener() {
        lock.withLock { listener }?.invalidate()
    }

    /// The listener of type `T`, made by `make` on first use from the WAL's size in frames so far.
    package func listener<T: WALCommitListener>(_ make: (_ walFrames: Int32) -> T) -> T {
        lock.withLock {
            if let existing = listener as? T { return existing }
            let made = make(walFrames)
            listener = made
            return made
        }
    }
}
