import CSQLCipher
import Dispatch
import Foundation

/// Keeps the WAL small without putting checkpoints on the commit path.
///
/// SQLite's auto-checkpoint runs inside the commit that crosses its threshold, so that commit pays for
/// copying the whole WAL back. Coffer replaces it with a WAL hook (installing one disables the built-in
/// auto-checkpoint) that only counts:
///
/// 1. When the WAL passes `threshold` pages, a PASSIVE checkpoint runs on a dedicated connection on a
///    background queue. It copies what was committed so far while the writer keeps committing.
/// 2. It then queues a short PASSIVE catch-up on the writer's own queue, between two write transactions,
///    to copy the few frames committed meanwhile. With every frame copied and no reader in the WAL, the
///    next write restarts the WAL from its start, and `journal_size_limit` trims the file. Without the
///    catch-up a busy writer would always stay a few frames ahead and the WAL would grow without bound.
/// 3. While bulk work writes through the writer (a live migration's worker: ``beginBulkWrites()``), the
///    threshold is ``bulkThresholdFactor`` times larger. Each catch-up holds the writer's queue for both of
///    a checkpoint's `fsync`s (a few milliseconds on a slow disk), and every app write that comes meanwhile
///    waits; bulk work writes most of the frames, so it would set off most of the catch-ups. The WAL grows
///    larger meanwhile (8,000 frames at the default threshold: 32 MiB of 4 KiB pages) and restarts as usual.
/// 4. After `idleDelay` seconds without a commit, the `-wal` file is emptied: a PASSIVE checkpoint here
///    copies what is left, then a TRUNCATE on the writer's own queue restarts and truncates the WAL. On the
///    writer's connection, the restart leaves the writer's page cache valid: run by any other connection,
///    it changes the WAL-index header, and SQLite empties the writer's whole page cache at its next
///    transaction (every page read again, and decrypted again). Nothing runs when the WAL is already empty.
///
/// Backups: the hook also reports each commit to the ``WALCommitHook`` (whose listener is Backup's changed-page
/// tracker), and every checkpoint takes its `checkpointGate` (the writer's catch-up and idle truncation only try it) so an
/// incremental backup can read page images from the main file while no checkpoint overwrites them.
package final class Checkpointer: @unchecked Sendable {
    private let writer: SerializedConnection
    /// The `-wal` file's path.
    private let walPath: String
    private let openConnection: () throws -> Connection
    private let threshold: Int32
    /// `threshold` while bulk work writes (``beginBulkWrites()``).
    private let bulkThreshold: Int32
    private let idleDelay: TimeInterval
    /// The writer's busy timeout in milliseconds, restored after its idle TRUNCATE (which does not wait).
    private let writerBusyTimeout: Int32
    private let hook: WALCommitHook
    /// True for an encrypted file: its growth moves the decrypted-page cache's cap, so commits refresh
    /// it every 16 WAL frames. A plaintext file's size plays no part in it.
    private let refreshesCacheCap: Bool
    private let queue = DispatchQueue(label: "coffer.checkpointer", qos: .utility)
    private let lock = NSLock()
    // Guarded by `lock`.
    private var checkpointPending = false
    private var idleCheckScheduled = false
    private var commits: UInt64 = 0
    private var framesAtSizeRefresh: Int32 = 0
    /// Bulk writers running (``beginBulkWrites()``): while any runs, checkpoints wait for a larger WAL.
    private var bulkWriters = 0
    private var stopped = false
    // Touched only on `queue`.
    private var connection: Connection?
    /// Checkpoints and their pages are counted here when ``Monitoring/metrics`` is on.
    private let metrics: DatabaseMetrics?

    init(
        writer: SerializedConnection, path: String, threshold: Int, idleDelay: TimeInterval, writerBusyTimeout: TimeInterval,
        hook: WALCommitHook, refreshesCacheCap: Bool, metrics: DatabaseMetrics? = nil,
        open: @escaping () throws -> Connection
    ) {
        self.walPath = path + "-wal"
        self.writerBusyTimeout = Int32(clamping: Int((writerBusyTimeout * 1000).rounded()))
        self.writer = writer
        self.metrics = metrics
        self.hook = hook
        self.refreshesCacheCap = refreshesCacheCap
        self.threshold = Int32(clamping: max(threshold, 1))
        self.bulkThreshold = Int32(clamping: max(threshold, 1) * Int(Self.bulkThresholdFactor))
        self.idleDelay = idleDelay
        self.openConnection = open
    }

    /// Installs the WAL hook on the writer connection (call on the writer's queue).
    package func install(on connection: Connection) {
        let context = Unmanaged.passRetained(self).toOpaque()
        sqlite3_wal_hook(
            connection.handle,
            { context, _, _, frames in
                guard let context else { return SQLITE_OK }
                Unmanaged<Checkpointer>.fromOpaque(context).takeUnretainedValue().didCommit(walFrames: frames)
                return SQLITE_OK
            }, context)
    }

    /// How many times larger the threshold is while bulk work writes.
    static let bulkThresholdFactor = 8

    /// Bulk work starts writing through the writer: checkpoints wait for a WAL ``bulkThresholdFactor``
    /// times larger until the matching ``endBulkWrites()``.
    package func beginBulkWrites() { lock.withLock { bulkWriters += 1 } }

    /// Bulk work stopped writing (one call per ``beginBulkWrites()``). When the last one stops with a WAL
    /// past the usual threshold, the background checkpoint starts now rather than at the next commit, so
    /// the bulk of the copying is done off the writer's queue before the app's next write.
    package func endBulkWrites() {
        let walFrames = hook.framesAfterLastCommit
        let due = lock.withLock { () -> Bool in
            bulkWriters = max(0, bulkWriters - 1)
            guard bulkWriters == 0, !stopped, walFrames >= threshold, !checkpointPending else { return false }
            checkpointPending = true
            return true
        }
        if due { queue.async { self.runBackgroundCheckpoint() } }
    }

    /// Removes the WAL hook and releases the reference it held (call on the writer's queue).
    package func uninstall(from connection: Connection) {
        let previous = sqlite3_wal_hook(connection.handle, nil, nil)
        if let previous { Unmanaged<Checkpointer>.fromOpaque(previous).release() }
    }

    /// Called by SQLite on the writer's thread after each commit, with the WAL's size in frames.
    ///
    /// One lock round per commit decides everything this commit schedules.
    private func didCommit(walFrames: Int32) {
        hook.didCommit(walFrames: walFrames)
        let due = lock.withLock { () -> CommitWork in
            commits &+= 1
            guard !stopped else { return CommitWork() }
            var work = CommitWork()
            work.checkpoint = walFrames >= (bulkWriters > 0 ? bulkThreshold : threshold) && !checkpointPending
            if work.checkpoint { checkpointPending = true }
            if !idleCheckScheduled {
                idleCheckScheduled = true
                work.idleCheckSeenCommits = commits
            }
            // Every 16 WAL frames, the decrypted-page cache's cap follows the files' growth, except beside a
            // checkpoint (which refreshes when it ends).
            let refreshDue = walFrames >= framesAtSizeRefresh + 16 || walFrames < framesAtSizeRefresh
            if refreshesCacheCap && refreshDue && !checkpointPending {
                framesAtSizeRefresh = walFrames
                work.refreshSizes = true
            }
            return work
        }
        // Here, on the writer's thread: two `stat` calls per open database cost less than waking the
        // checkpointer's queue, which took a futex wake and a context switch every 16 frames (issue 20:
        // W2 made 503 futex calls against raw C's 15).
        if due.refreshSizes { DecryptedPageCache.OpenFiles.shared.refresh() }
        if due.checkpoint { queue.async { self.runBackgroundCheckpoint() } }
        if let seen = due.idleCheckSeenCommits { scheduleIdleCheck(seenCommits: seen) }
    }

    /// What one commit schedules, decided under the lock.
    private struct CommitWork {
        var checkpoint = false
        var refreshSizes = false
        /// The commit count an idle check starts from, when this commit schedules one.
        var idleCheckSeenCommits: UInt64?
    }

    private func runBackgroundCheckpoint() {
        copyBack()
        writer.async { connection in
            // Skipped while a backup reads the main file: the next background checkpoint catches up.
            if let connection, self.hook.checkpointGate.try() {
                _ = CheckpointCount.run(connection, mode: SQLITE_CHECKPOINT_PASSIVE, metrics: self.metrics)
                self.hook.checkpointGate.unlock()
            }
            self.lock.withLock { self.checkpointPending = false }
        }
    }

    /// Checks, `idleDelay` seconds from now, whether a commit came since the one counted `seenCommits`;
    /// if none did, empties the WAL. `attempt` counts the tries a busy WAL or backup put off.
    private func scheduleIdleCheck(seenCommits: UInt64, attempt: Int = 0) {
        queue.asyncAfter(deadline: .now() + idleDelay) {
            let (idle, current) = self.lock.withLock { () -> (Bool, UInt64) in
                if self.stopped { return (false, self.commits) }
                let idle = self.commits == seenCommits
                if idle { self.idleCheckScheduled = false }
                return (idle, self.commits)
            }
            if idle {
                self.emptyIdleWAL(seenCommits: seenCommits, attempt: attempt)
            } else if !self.lock.withLock({ self.stopped }) {
                self.scheduleIdleCheck(seenCommits: current)
            }
        }
    }

    /// Empties the `-wal` file of an idle database (on `queue`): the frames are copied back here, off the
    /// writer's queue, then the writer restarts and truncates the WAL itself between two transactions,
    /// keeping its page cache. A WAL already empty is left alone: restarting it would only empty every
    /// other connection's page cache.
    private func emptyIdleWAL(seenCommits: UInt64, attempt: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard DecryptedPageCache.OpenFiles.fileSize(walPath) > 0 else { return }
        copyBack()
        connection.map { _ = sqlite3_db_release_memory($0.handle) }
        writer.async { connection in
            guard let connection else { return }
            // A commit since (which schedules its own idle check) or a stop: this WAL is not idle any more.
            let stillIdle = self.lock.withLock { !self.stopped && self.commits == seenCommits }
            guard stillIdle else { return }
            var code = SQLITE_BUSY
            if self.hook.checkpointGate.try() {
                // Without waiting: a reader still in the WAL must not hold up the app's next write.
                connection.setBusyTimeout(milliseconds: 0)
                code = CheckpointCount.run(connection, mode: SQLITE_CHECKPOINT_TRUNCATE, metrics: self.metrics)
                connection.setBusyTimeout(milliseconds: self.writerBusyTimeout)
                self.hook.checkpointGate.unlock()
            }
            if code == SQLITE_OK {
                // The files shrank: pages the decrypted-page cache holds above its new cap are freed.
                DecryptedPageCache.OpenFiles.shared.trim()
            } else if code == SQLITE_BUSY || code == SQLITE_LOCKED {
                self.retryIdleCheck(seenCommits: seenCommits, attempt: attempt + 1)
            } else {
                connection.logger.warning("idle checkpoint failed", metadata: ["code": "\(code)"])
            }
        }
    }

    /// Tries the idle truncation again later, a few times, unless a commit came since (whose own idle
    /// check takes over) or an idle check is already scheduled.
    private func retryIdleCheck(seenCommits: UInt64, attempt: Int) {
        guard attempt < Self.idleAttempts else { return }
        let retry = lock.withLock { () -> Bool in
            guard !stopped, !idleCheckScheduled, commits == seenCommits else { return false }
            idleCheckScheduled = true
            return true
        }
        if retry { scheduleIdleCheck(seenCommits: seenCommits, attempt: attempt) }
    }

    /// Tries of an idle truncation that readers in the WAL or a running backup keep busy.
    private static let idleAttempts = 5

    /// Runs a PASSIVE checkpoint on the checkpointer's connection (on `queue`); failures are only
    /// logged, since a later checkpoint retries the same work.
    private func copyBack() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !lock.withLock({ stopped }) else { return }
        do {
            if connection == nil { connection = try openConnection() }
            guard let connection else { return }
            let code = hook.checkpointGate.withLock {
                CheckpointCount.run(connection, mode: SQLITE_CHECKPOINT_PASSIVE, metrics: metrics)
            }
            if code != SQLITE_OK && code != SQLITE_BUSY && code != SQLITE_LOCKED {
                connection.logger.warning("checkpoint failed", metadata: ["code": "\(code)"])
            }
            // The files' sizes changed: the decrypted-page cache's cap follows.
            DecryptedPageCache.OpenFiles.shared.refresh()
        } catch {
            connection?.logger.warning("checkpointer could not open", metadata: ["error": "\(error)"])
        }
    }

    /// Frees what this connection's page cache holds unused, once any checkpoint running has ended.
    func releaseMemory() {
        queue.sync { connection.map { _ = sqlite3_db_release_memory($0.handle) } }
    }

    /// Stops scheduling, waits for running work and closes the connection (before rekey and close).
    package func suspend() {
        lock.withLock { stopped = true }
        queue.sync {
            connection?.close()
            connection = nil
        }
    }

    /// Resumes after ``suspend()``; the connection reopens on next use with the current key.
    package func resume() {
        lock.withLock {
            stopped = false
            checkpointPending = false
            idleCheckScheduled = false
        }
    }
}
