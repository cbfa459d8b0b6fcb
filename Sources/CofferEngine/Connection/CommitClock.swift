import Foundation

/// Counts one database's commits so that a read transaction can tell exactly which of them its snapshot
/// sees: the record cache's clock (see the RecordCache article).
///
/// ``started`` moves in SQLite's commit hook, before the commit becomes visible to any reader;
/// ``finished`` catches up when the writer is idle again, after the commit's change set was published.
/// A read transaction that noted `started == finished` when it began and finds `started` unchanged once
/// its snapshot is open sees exactly the first `started` commits. Counting runs only while the change
/// hooks are installed, that is while something (the record cache) observes; until then ``isActive`` is
/// false and nothing is stamped.
package final class CommitClock: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var startedCount: UInt64 = 0
    private var finishedCount: UInt64 = 0
    private var active = false
    private var attachmentObject: (any CommitClockAttachment)?
    /// The database the clock belongs to (type-erased: `Database` is in a higher layer), so that a
    /// connection can reach it to start its record cache.
    package weak var owner: AnyObject?

    /// Commits whose commit hook ran, and commits finished (published, writer idle again).
    package var counts: (started: UInt64, finished: UInt64) { lock.withLock { (startedCount, finishedCount) } }

    /// The counts for a read transaction's stamp, or nil until the hooks that move the clock are installed.
    var stampCounts: (started: UInt64, finished: UInt64)? {
        lock.withLock { active ? (startedCount, finishedCount) : nil }
    }

    /// The writer is committing (SQLite's commit hook, on the writer's queue).
    func commitWillStart() { lock.withLock { startedCount &+= 1 } }

    /// The writer is idle: every commit it made is visible and published.
    func writerIsIdle() { lock.withLock { finishedCount = startedCount } }

    /// Counts a change made outside the writer's commits (another process's commit, a cleared cache): a
    /// transaction that overlaps it cannot be placed exactly. A commit under way stays under way.
    package func skip() {
        lock.withLock {
            startedCount &+= 1
            finishedCount &+= 1
        }
    }

    /// The object that keeps state by this clock (the record cache), created once by `make`.
    package func attachment<A: CommitClockAttachment>(_ make: () -> A?) -> A? {
        lock.withLock {
            if let existing = attachmentObject { return existing as? A }
            attachmentObject = make()
            return attachmentObject as? A
        }
    }

    /// Marks the clock as counting (the hooks are in place).
    package func activate() { lock.withLock { active = true } }

    /// Empties the attachment's state (the database is rekeyed), and lets it go when `detaching` (the
    /// database closes: the attachment holds this clock, so keeping it would keep both alive).
    func clearAttachment(detaching: Bool = false) {
        let attachment = lock.withLock {
            defer { if detaching { attachmentObject = nil } }
            return attachmentObject
        }
        attachment?.clear()
    }
}

/// State kept by a ``CommitClock`` that must go when the database is rekeyed or closed.
package protocol CommitClockAttachment: AnyObject, Sendable {
    /// Drops everything kept.
    func clear()
}

/// Where the read transaction running on a connection stands in the commit order (see ``CommitClock``).
@usableFromInline
package struct SnapshotStamp {
    /// How far the transaction's snapshot is known.
    @usableFromInline
    package enum Placement {
        /// Not a stamped read transaction (a write, a read begun before the clock was active).
        case none
        /// Begun with these counts; the snapshot is placed at the first cached lookup.
        case begun(started: UInt64, finished: UInt64)
        /// The snapshot sees exactly the first `commits` commits.
        case exact(commits: UInt64)
        /// A commit overlapped the snapshot's start: the cache is not used in this transaction.
        case unknown
    }

    @usableFromInline package var placement = Placement.none
    /// `PRAGMA data_version` and the commit count at this connection's last exactly placed snapshot:
    /// a change of version without a commit of ours in between is another connection's commit.
    package var lastDataVersion: (version: Int, commits: UInt64)?
}

extension Connection {
    /// Stamps the read transaction that just began (call right after `BEGIN`, before any statement).
    func stampReadTransaction() {
        guard let counts = commitClock?.stampCounts else {
            snapshotStamp.placement = .none
            return
        }
        snapshotStamp.placement = .begun(started: counts.started, finished: counts.finished)
    }
}

/// What a clock's attachment keeps on one connection, so that the connection reaches it with no lock:
/// the attachment itself and the parts it hands out by key (the record cache's registry, and its store
/// per record type under the type's `ObjectIdentifier`). Only the attachment's layer fills and reads it,
/// on the connection's one thread at a time.
@usableFromInline
package struct AttachmentView {
    package var attachment: AnyObject?
    @usableFromInline package var parts: [(key: ObjectIdentifier, part: AnyObject)] = []
}
