import CofferEngine
import CofferFormat
import CofferRecords
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Knows which pages were committed since the last backup generation, so an incremental backup copies
/// only those.
///
/// **How.** Coffer owns the writer, and SQLite calls the WAL hook on the writer's thread after every
/// commit with the WAL's size in frames. WAL frame headers are plaintext (page number, salts), so the
/// hook reads the headers of the frames the commit appended — 24 bytes each, without the key — and adds
/// their page numbers to a set. Nothing is read until the first backup turns tracking on.
///
/// **Why it is exact.** A full backup resets the set on the writer's queue at the instant its read
/// snapshot starts; an incremental backup resets it on the writer's queue right after a checkpoint that
/// copied the whole WAL into the main file. Between two such points every committed page passes through
/// the hook, so base + increments equals the database at the increment's point. Only a writer in another
/// process would escape the hook: incrementals assume Coffer is the only writer (the next full backup
/// repairs anything else).
///
/// **The gate.** While an incremental backup reads page images from the main file, no checkpoint may
/// overwrite them: every Coffer checkpoint takes ``checkpointGate`` (the writer's opportunistic catch-up
/// only tries it and skips when it is held).
final class ChangedPageTracker: WALCommitListener, @unchecked Sendable {
    /// Held while a backup reads pages from the main file; checkpoints wait for it (or skip): the pool's
    /// ``WALCommitHook/checkpointGate``.
    let checkpointGate: NSLock
    /// Serializes backups of one database.
    let backupLock = NSLock()
    private let walPath: String
    private let lock = NSLock()
    // Guarded by `lock`.
    private var tracking = false
    private var changed = Set<UInt32>()
    private var walSalts: (UInt32, UInt32)?
    private var lastFrame: Int32 = 0
    private var anchor: Anchor?

    /// The generation the changed-page set is relative to.
    struct Anchor: Equatable {
        let directory: String
        let generationID: Int
    }

    /// A tracker for the database at `databasePath` whose checkpoints take `checkpointGate`, attached when its
    /// WAL holds `walFrames` frames.
    init(databasePath: String, checkpointGate: NSLock, walFrames: Int32) {
        walPath = databasePath + "-wal"
        self.checkpointGate = checkpointGate
        lastFrame = walFrames
    }

    /// Called on the writer's thread after each commit, with the WAL's size in frames.
    func didCommit(walFrames: Int32) {
        lock.withLock {
            defer { lastFrame = walFrames }
            guard tracking else { return }
            // Through the descriptor table: a descriptor of a live database's file is never closed early.
            let wal = ReadOnlyFile(path: walPath)
            defer { withExtendedLifetime(wal) {} }
            guard let descriptor = wal?.descriptor, let header = Self.readWALHeader(descriptor: descriptor) else {
                // A WAL we cannot read: the set would be incomplete, so the next backup must be full.
                stopTracking()
                return
            }
            var first = lastFrame + 1
            if walSalts.map({ $0 != header.salts }) ?? true || walFrames < lastFrame {
                first = 1  // The WAL restarted: its frames count from 1 again.
            }
            walSalts = header.salts
            guard first <= walFrames else { return }
            guard let pages = Self.readFramePages(descriptor: descriptor, header: header, frames: first...walFrames) else {
                stopTracking()
                return
            }
            changed.formUnion(pages)
        }
    }

    /// Starts a new changed-page set at a point where the caller holds the writer (no commit can
    /// happen meanwhile) and returns the pages committed since the previous reset, or nil when tracking
    /// was off or belonged to another anchor.
    func reset(expecting expected: Anchor?) -> Set<UInt32>? {
        lock.withLock {
            let previous = tracking && expected != nil && anchor == expected ? changed : nil
            changed.removeAll()
            tracking = true
            anchor = nil
            walSalts = Self.readWALHeader(walPath)?.salts
            return previous
        }
    }

    /// Records which generation the current set is relative to, once that generation is on disk.
    func setAnchor(_ anchor: Anchor) {
        lock.withLock { if tracking { self.anchor = anchor } }
    }

    /// Puts pages back after a failed incremental backup so the next one copies them.
    func restore(_ pages: Set<UInt32>, anchor: Anchor) {
        lock.withLock {
            changed.formUnion(pages)
            if tracking { self.anchor = anchor }
        }
    }

    /// The anchored set, for saving at a clean close.
    func snapshotForPersistence() -> (Anchor, Set<UInt32>)? {
        lock.withLock { tracking ? anchor.map { ($0, changed) } : nil }
    }

    /// Takes back a set saved at a clean close (on the writer's queue, with the WAL empty).
    func resume(pages: Set<UInt32>, anchor: Anchor) {
        lock.withLock {
            changed = pages
            tracking = true
            self.anchor = anchor
            walSalts = nil
        }
    }

    /// Forgets everything: the next backup is a full one (after a rekey, or when a backup failed).
    func invalidate() {
        lock.withLock { stopTracking() }
    }

    /// The anchor the next incremental backup could build on, if any.
    var currentAnchor: Anchor? { lock.withLock { tracking ? anchor : nil } }

    /// Pages committed since the last generation (for "back up after M pages" schedules).
    var changedPageCount: Int { lock.withLock { changed.count } }

    private func stopTracking() {
        tracking = false
        changed.removeAll()
        anchor = nil
        walSalts = nil
    }

    /// Saves the changed-page set beside the backups (see `persistAfterClose`).
    func walEmptiedAtClose(databasePath: String) { persistAfterClose(databasePath: databasePath) }

    // MARK: Reading the WAL's plaintext headers (CofferFormat's WALHeader and WALFrameHeader)

    /// The WAL's 32-byte header.
    static func readWALHeader(_ path: String) -> WALHeader? {
        ReadOnlyFile(path: path).flatMap { readWALHeader(descriptor: $0.descriptor) }
    }

    static func readWALHeader(descriptor: Int32) -> WALHeader? {
        DatabaseFile.read(descriptor, offset: 0, count: WALHeader.size).flatMap(WALHeader.init)
    }

    /// The page numbers of `frames` (1-based); nil when a frame is unreadable or carries other salts.
    static func readFramePages(descriptor: Int32, header: WALHeader, frames: ClosedRange<Int32>) -> [UInt32]? {
        var pages: [UInt32] = []
        pages.reserveCapacity(frames.count)
        for frame in frames {
            let offset = UInt64(header.frameOffset(Int(frame)))
            guard let bytes = DatabaseFile.read(descriptor, offset: offset, count: WALHeader.frameHeaderSize) else {
                return nil
            }
            let frameHeader = WALFrameHeader(bytes)
            guard frameHeader.belongs(to: header) else { return nil }
            pages.append(frameHeader.pageNumber)
        }
        return pages
    }
}

extension Database {
    /// The changed-page tracker, attached to the pool's ``WALCommitHook`` on first use (the first backup,
    /// or a scheduler's first look): it follows commits from then on, starting at the WAL's current size.
    var changeTracker: ChangedPageTracker {
        commitHook.listener {
            ChangedPageTracker(databasePath: path, checkpointGate: commitHook.checkpointGate, walFrames: $0)
        }
    }
}
