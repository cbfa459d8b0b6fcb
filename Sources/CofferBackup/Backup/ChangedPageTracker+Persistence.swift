import CofferEngine
import CofferRecords
import Foundation

/// Carrying the changed-page set across a clean close, so the first backup after the next open can
/// still be incremental.
///
/// At ``Database/close()``, once the WAL has been emptied into the main file, the set and the generation
/// it is relative to are saved as `pending-changes.json` in that generation's backup directory, with the
/// main file's size, modification time (nanoseconds) and inode. The next backup into that directory, if
/// it runs before anything was committed after opening (the WAL still empty), takes the set back only if
/// the file is exactly as it was left; any write in between — by another process, a crash recovery, a
/// checkpoint — changes the modification time and the next backup is full. The file is consumed on use.
extension ChangedPageTracker {
    struct PendingChanges: Codable {
        var formatVersion = 1
        var generationID: Int
        var size: Int64
        var modificationSeconds: Int64
        var modificationNanoseconds: Int64
        var inode: UInt64
        var pages: [UInt32]
    }

    static let pendingFileName = "pending-changes.json"

    private struct FileState: Equatable {
        let size: Int64, seconds: Int64, nanoseconds: Int64, inode: UInt64
        init(size: Int64, seconds: Int64, nanoseconds: Int64, inode: UInt64) {
            (self.size, self.seconds, self.nanoseconds, self.inode) = (size, seconds, nanoseconds, inode)
        }
        init?(path: String) {
            guard let status = FileStatus(path: path) else { return nil }
            size = status.size
            seconds = status.modifiedSeconds
            nanoseconds = status.modifiedNanoseconds
            inode = status.identity.inode
        }
    }

    /// Saves the set after a clean close (the WAL was emptied into the main file). Best effort.
    func persistAfterClose(databasePath: String) {
        guard let (anchor, pages) = snapshotForPersistence(), let state = FileState(path: databasePath) else { return }
        let pending = PendingChanges(
            generationID: anchor.generationID, size: state.size, modificationSeconds: state.seconds,
            modificationNanoseconds: state.nanoseconds, inode: state.inode, pages: pages.sorted())
        guard let data = try? JSONEncoder().encode(pending) else { return }
        try? BackupFiles.writeAtomically(
            data, to: URL(fileURLWithPath: anchor.directory).appendingPathComponent(Self.pendingFileName))
    }

    /// Takes a saved set back (call on the writer's queue, before deciding a backup's kind) when tracking
    /// is not anchored yet, nothing was committed since opening, and the file is as it was left.
    func resumeIfUnchanged(directory: URL, latestGenerationID: Int?, databasePath: String) {
        let url = directory.appendingPathComponent(Self.pendingFileName)
        guard let data = FileManager.default.contents(atPath: url.path) else { return }
        try? FileManager.default.removeItem(at: url)
        guard currentAnchor == nil, let latestGenerationID,
            let pending = try? JSONDecoder().decode(PendingChanges.self, from: data),
            pending.formatVersion == 1, pending.generationID == latestGenerationID,
            BackupFiles.size(of: databasePath + "-wal") == 0,
            let state = FileState(path: databasePath),
            state
                == FileState(
                    size: pending.size, seconds: pending.modificationSeconds,
                    nanoseconds: pending.modificationNanoseconds, inode: pending.inode)
        else { return }
        resume(
            pages: Set(pending.pages),
            anchor: Anchor(directory: directory.standardizedFileURL.path, generationID: latestGenerationID))
    }
}
