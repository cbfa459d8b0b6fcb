// DescriptorTable — the one place Coffer opens a database's files outside SQLite, and why it never closes a
// descriptor too early.
//
// POSIX advisory locks belong to a process and an inode, not to a descriptor: closing *any* descriptor of a
// file drops every lock the process holds on that file, including those SQLite's connections took through
// their own descriptors (SQLite's "How To Corrupt An SQLite Database File", §2.2). A process whose locks were
// dropped this way still believes it holds them; another process then takes the database's EXCLUSIVE lock on
// close, checkpoints and deletes the `-wal` and `-shm` under it, and the first process's next reads fail or,
// worse, its writes go to a WAL nobody will read. SQLite's unix VFS guards its own descriptors: while the
// process holds a lock on an inode, a connection's close parks its descriptor instead of closing it.
//
// Coffer reads the same files beside SQLite (the salt and page 1 to detect the cipher, the WAL for backups'
// changed pages, the `-shm` for checkpoint metrics, whole files for backups, verify and statistics), so it
// keeps the same rule here:
//
// - A `Database` takes a hold (``DatabaseFileHold``) on its main file before its first connection opens and
//   gives it back after its last connection has closed.
// - Every read-only descriptor Coffer opens on a file, on its `-wal`, `-shm` or `-journal`, is borrowed from
//   this table (``ReadOnlyFile``). Given back while any hold on the main file lives, it is parked, and the next
//   borrow of the same inode reuses it; it is closed only when the last hold goes, when this process's
//   connections have closed and hold no lock the close could drop.
// - Holds, parking and closing happen under one lock, so a descriptor is never closed between another
//   `Database` taking its hold and opening its connections.
//
// Descriptors are read with `pread` (no shared file offset), so one serves every thread. Writes to a live
// database go through SQLite only.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file's device and inode: what POSIX locks belong to.
package struct FileIdentity: Hashable, Sendable {
    let device: UInt64
    package let inode: UInt64

    /// The identity of the file at `path` (following links); nil when it does not exist.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity of the file open as `descriptor`.
    init?(descriptor: Int32) {
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        self.init(info)
    }

    /// The identity in `info`, a `stat` the caller already made.
    init(_ info: stat) {
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// The process-wide table of read-only descriptors of database files and of the holds that keep them open
/// (see the comment at the top of this file).
package final class DescriptorTable: @unchecked Sendable {
    static let shared = DescriptorTable()

    /// A parked descriptor, and the files whose holds keep it open.
    private struct Parked {
        let descriptor: Int32
        let owners: [FileIdentity]
    }

    private let lock = NSLock()
    /// Main files some `Database` in this process has open, with how many hold them.
    private var holds: [FileIdentity: Int] = [:]
    /// Descriptors given back while their owner was held, by the inode they are open on.
    private var parked: [FileIdentity: [Parked]] = [:]

    /// The suffixes SQLite gives a database's companion files.
    package static let companionSuffixes = ["-wal", "-shm", "-journal"]

    /// The main files whose holds keep a descriptor of `path` open: `path` itself and, for a companion
    /// file `X-wal`, `X-shm` or `X-journal`, the database `X`.
    private static func owners(of path: String, identity: FileIdentity) -> [FileIdentity] {
        var owners = [identity]
        for suffix in companionSuffixes where path.hasSuffix(suffix) {
            if let main = FileIdentity(path: String(path.dropLast(suffix.count))) { owners.append(main) }
        }
        return owners
    }

    /// A read-only descriptor of `path`, its identity and owners: a parked one of the same inode when there
    /// is one, else a new one. Nil when the file cannot be opened.
    func borrow(_ path: String) -> (descriptor: Int32, identity: FileIdentity, owners: [FileIdentity])? {
        if let identity = FileIdentity(path: path) {
            let reused: Parked? = lock.withLock {
                guard var list = parked[identity], let last = list.popLast() else { return nil }
                parked[identity] = list.isEmpty ? nil : list
                return last
            }
            if let reused { return (reused.descriptor, identity, Self.owners(of: path, identity: identity)) }
        }
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        guard let identity = FileIdentity(descriptor: descriptor) else {
            giveBack(descriptor, identity: nil, owners: [])
            return nil
        }
        return (descriptor, identity, Self.owners(of: path, identity: identity))
    }

    /// Takes back a borrowed descriptor: parked while any of its owners is held, closed otherwise.
    func giveBack(_ descriptor: Int32, identity: FileIdentity?, owners: [FileIdentity]) {
        lock.withLock {
            if let identity, owners.contains(where: { holds[$0] != nil }) {
                parked[identity, default: []].append(Parked(descriptor: descriptor, owners: owners))
            } else {
                close(descriptor)
            }
        }
    }

    /// Records a hold on the main file `identity`.
    func hold(_ identity: FileIdentity) {
        lock.withLock { holds[identity, default: 0] += 1 }
    }

    /// Gives back a hold; the last one closes every parked descriptor no other hold keeps open.
    func release(_ identity: FileIdentity) {
        lock.withLock {
            guard let count = holds[identity] else { return }
            guard count == 1 else {
                holds[identity] = count - 1
                return
            }
            holds[identity] = nil
            for (file, list) in parked {
                let (keep, drop) = list.reduce(into: ([Parked](), [Parked]())) { split, entry in
                    if entry.owners.contains(where: { holds[$0] != nil }) { split.0.append(entry) } else { split.1.append(entry) }
                }
                guard !drop.isEmpty else { continue }
                for entry in drop { close(entry.descriptor) }
                parked[file] = keep.isEmpty ? nil : keep
            }
        }
    }

    /// How many descriptors are parked (for tests).
    var parkedCount: Int { lock.withLock { parked.values.reduce(0) { $0 + $1.count } } }
}

/// A `Database`'s claim on its main file: taken before its first connection opens, given back after its last
/// connection closes. While it lives, no descriptor Coffer opens on the file or its companions is closed
/// (see ``DescriptorTable``).
package final class DatabaseFileHold: @unchecked Sendable {
    private let lock = NSLock()
    private var identity: FileIdentity?

    /// Holds the file at `path`, creating it empty first when `creating` is set and it does not exist (SQLite
    /// reads an empty file as a new database), so that the hold exists before any connection takes a lock.
    ///
    /// - Throws: ``DatabaseFileError/cannotOpen(_:)`` when the file does not exist and cannot be created.
    package init(path: String, creating: Bool) throws(DatabaseFileError) {
        if FileIdentity(path: path) == nil, creating {
            let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard descriptor >= 0 else { throw .cannotOpen(path) }
            close(descriptor)
        }
        guard let identity = FileIdentity(path: path) else { throw .cannotOpen(path) }
        DescriptorTable.shared.hold(identity)
        self.identity = identity
    }

    /// Moves the hold to the file now at `path` (after the file was replaced by a rename), keeping the old
    /// one until the new one is taken.
    package func follow(path: String) {
        guard let current = FileIdentity(path: path) else { return }
        let previous: FileIdentity? = lock.withLock {
            defer { identity = current }
            return identity
        }
        guard previous != current else { return }
        DescriptorTable.shared.hold(current)
        if let previous { DescriptorTable.shared.release(previous) }
    }

    /// Gives the hold back. Call it after the database's last connection has closed; releasing twice is
    /// harmless.
    package func release() {
        let previous: FileIdentity? = lock.withLock {
            defer { identity = nil }
            return identity
        }
        if let previous { DescriptorTable.shared.release(previous) }
    }

    deinit { release() }
}

/// A read-only descriptor of one file, borrowed from the process's ``DescriptorTable`` and given back (parked
/// or closed, as the table decides) when this object goes. Reads are positional, so it can be shared.
package final class ReadOnlyFile: @unchecked Sendable {
    /// The path it was opened by.
    package let path: String
    /// The descriptor, for `pread` (never close it: the table does).
    package let descriptor: Int32
    private let identity: FileIdentity
    private let owners: [FileIdentity]

    /// Opens `path` for reading; nil when it cannot be opened.
    package init?(path: String) {
        guard let borrowed = DescriptorTable.shared.borrow(path) else { return nil }
        self.path = path
        descriptor = borrowed.descriptor
        identity = borrowed.identity
        owners = borrowed.owners
    }

    deinit { DescriptorTable.shared.giveBack(descriptor, identity: identity, owners: owners) }

    /// The file's size in bytes now.
    package var size: UInt64 {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? UInt64(info.st_size) : 0
    }

    /// Flushes the file's written data to disk (`fsync` flushes a file through any descriptor of it, a
    /// read-only one included); false when it failed.
    package func synchronize() -> Bool { fsync(descriptor) == 0 }

    /// `count` bytes at `offset`; nil unless all of them could be read.
    package func read(at offset: UInt64, count: Int) -> [UInt8]? {
        Self.read(descriptor, offset: offset, count: count, whole: true)
    }

    /// Up to `count` bytes at `offset`: fewer at the end of the file, nil on a read error.
    package func readUpTo(_ count: Int, at offset: UInt64) -> [UInt8]? {
        Self.read(descriptor, offset: offset, count: count, whole: false)
    }

    /// `pread` until `count` bytes at `offset` are read or the file ends; nil on an error, and when `whole`
    /// is set also on a short read (a count of 0 reads nothing: nil when whole, empty otherwise).
    static func read(_ descriptor: Int32, offset: UInt64, count: Int, whole: Bool) -> [UInt8]? {
        guard count >= 0, offset <= UInt64(Int64.max), count > 0 || !whole else { return nil }
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = buffer.withUnsafeMutableBytes { pointer -> Int in
                guard let base = pointer.baseAddress else { return -1 }
                return pread(descriptor, base + done, count - done, off_t(offset) + off_t(done))
            }
            if got < 0 || (got == 0 && whole) { return nil }
            if got == 0 { break }
            done += got
        }
        buffer.removeSubrange(done...)
        return buffer
    }
}
