import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The POSIX locks other processes hold on a database's files, for the lock-wait trace
/// (``Monitoring/lockWaits``): which process holds what a waiting statement needs.
///
/// Read from `/proc/locks` (Linux), which names each lock's process, file (device and inode) and byte
/// range. Nothing is opened on the database's files: opening and closing a descriptor on a file releases
/// every POSIX lock the process holds on it, SQLite's included. Elsewhere the list is empty, and the trace
/// says the holder is unknown.
struct LockHolders {
    /// One lock another process holds.
    struct Holder: Equatable, CustomStringConvertible {
        /// The process holding it.
        var processID: Int32
        /// What SQLite uses that byte range for (`WAL write lock`, `read mark 2`, `RESERVED`…).
        var lock: String
        var description: String { "pid \(processID) (\(lock))" }
    }

    /// Whether this platform names lock holders (Linux's `/proc/locks`).
    static var isAvailable: Bool {
        #if os(Linux)
        return true
        #else
        return false
        #endif
    }

    /// The locks processes other than this one hold on `databasePath` and its `-shm`, the shared-memory
    /// "connected" lock (which every process with the file open holds) left out.
    static func foreign(databasePath: String) -> [Holder] {
        #if os(Linux)
        guard let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8) else { return [] }
        let files = [(databasePath, false), (databasePath + "-shm", true)].compactMap { path, isShm in
            fileID(path).map { ($0, isShm) }
        }
        let me = getpid()
        var holders: [Holder] = []
        for line in table.split(separator: "\n") {
            // "1: POSIX  ADVISORY  WRITE 4242 fe:01:1234567 120 120" (-> lines are waiters: skipped)
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 8, fields[1] == "POSIX", let pid = Int32(fields[4]), pid != me,
                let start = UInt64(fields[6])
            else { continue }
            let device = fields[5].split(separator: ":")
            guard device.count == 3, let inode = UInt64(device[2]),
                let major = UInt64(device[0], radix: 16), let minor = UInt64(device[1], radix: 16),
                let file = files.first(where: { $0.0 == FileID(major: major, minor: minor, inode: inode) })
            else { continue }
            guard let name = lockName(offset: start, inSharedMemory: file.1) else { continue }
            let holder = Holder(processID: pid, lock: name)
            if !holders.contains(holder) { holders.append(holder) }
        }
        return holders
        #else
        return []
        #endif
    }

    /// What SQLite's unix VFS locks at `offset`: in the `-shm` file the WAL-index locks (bytes 120–127;
    /// 128 is the "connected" lock, left out); in the database file the rollback locks at 1 GiB.
    static func lockName(offset: UInt64, inSharedMemory: Bool) -> String? {
        if inSharedMemory {
            switch offset {
            case 120: return "WAL write lock"
            case 121: return "WAL checkpoint lock"
            case 122: return "WAL recovery lock"
            case 123...127: return "WAL read mark \(offset - 123)"
            default: return nil
            }
        }
        switch offset {
        case 0x4000_0000: return "PENDING lock"
        case 0x4000_0001: return "RESERVED lock"
        case 0x4000_0002..<0x4000_0202: return "SHARED lock"
        default: return nil
        }
    }

    struct FileID: Equatable {
        var major: UInt64
        var minor: UInt64
        var inode: UInt64
    }

    private static func fileID(_ path: String) -> FileID? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        let device = UInt64(info.st_dev)
        // glibc's gnu_dev_major / gnu_dev_minor.
        let major = ((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff))
        let minor = (device & 0xff) | ((device >> 12) & ~UInt64(0xff))
        return FileID(major: major, minor: minor, inode: UInt64(info.st_ino))
    }
}
