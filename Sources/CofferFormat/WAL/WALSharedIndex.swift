// WALSharedIndex — what SQLite's wal-index (the `-shm` file beside a WAL database) says about the WAL: its
// last committed frame and how many frames checkpoints have copied into the main file.
//
// Layout (native byte order: the file is never moved between machines): two copies of the 48-byte
// WalIndexHdr at 0 and 48 — isInit at byte 12, mxFrame (the last committed frame) at 16, the WAL header's
// salts (raw bytes 16–23 of the `-wal`) at 32 — then WalCkptInfo at 96, whose first field nBackfill counts
// the frames a checkpoint has copied. A writer updates the second copy, then the first: the header is read
// only when both copies agree and isInit is set, as SQLite's own readers do.

import Foundation

/// The wal-index header of a database in WAL mode (its `-shm` file), read without SQLite.
///
/// ```swift
/// if let index = WALSharedIndex(databasePath: "app.db") {
///     print("\(index.backfilledFrames) of \(index.maxFrame) frames checkpointed")
/// }
/// ```
public struct WALSharedIndex: Sendable, Equatable {
    /// The last committed frame of the WAL (`mxFrame`): the WAL's committed size in frames.
    public let maxFrame: UInt32
    /// Frames that checkpoints have copied into the main file (`nBackfill`).
    public let backfilledFrames: UInt32
    /// The WAL header's salts as stored (its raw bytes 16–23): the WAL generation this index describes.
    public let walSalts: [UInt8]

    /// Reads the `-shm` file beside the database at `databasePath`; nil when it is absent, short, not
    /// initialised, or its two header copies disagree (a writer was updating it).
    public init?(databasePath: String) {
        self.init(path: databasePath + "-shm")
    }

    /// Reads the wal-index file at `path` (see ``init(databasePath:)``).
    public init?(path: String) {
        // Through the descriptor table: closing a descriptor of the -shm would drop this process's locks on it.
        guard let file = ReadOnlyFile(path: path), let bytes = file.read(at: 0, count: 100), bytes[0..<48] == bytes[48..<96],
            bytes[12] != 0
        else { return nil }
        func native(_ offset: Int) -> UInt32 {
            bytes.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self) }
        }
        maxFrame = native(16)
        backfilledFrames = native(96)
        walSalts = Array(bytes[32..<40])
    }

    /// Whether this index describes the WAL at `walPath` (same salts in its header), not an earlier
    /// generation of it.
    public func describes(walPath: String) -> Bool {
        ReadOnlyFile(path: walPath)?.read(at: 16, count: 8) == walSalts
    }
}
