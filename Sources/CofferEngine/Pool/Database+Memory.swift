import CSQLCipher
import Foundation

extension Database {
    /// Frees the memory this database's connections hold unused, and every page of the process-wide
    /// ``DecryptedPageCache``: call it on a memory warning or when the app enters the background.
    ///
    /// Each idle connection — the writer once any write running has ended, the readers no caller holds,
    /// the checkpointer's — gives back its page cache (`sqlite3_db_release_memory`); the decrypted-page
    /// cache's pages are wiped and freed (``DecryptedPageCache/purge()``). Nothing is closed and no
    /// setting changes: the next reads fill the caches again, decrypting their pages anew.
    ///
    /// ```swift
    /// NotificationCenter.default.addObserver(
    ///     forName: UIApplication.didReceiveMemoryWarningNotification, object: nil, queue: nil
    /// ) { _ in database.releaseMemory() }
    /// ```
    ///
    /// Called inside one of this database's own `write` closures, it skips the writer.
    public func releaseMemory() {
        readers?.forEachIdle { sqlite3_db_release_memory($0.handle) }
        if !writer.isOnQueue { _ = try? writer.sync { sqlite3_db_release_memory($0.handle) } }
        checkpointer?.releaseMemory()
        DecryptedPageCache.purge()
        DecryptedPageCache.OpenFiles.shared.refresh()
    }
}
