import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The POSIX advisory locks this process holds, read from Linux's `/proc/locks`, and the descriptors it has
/// open, read from `/proc/self/fd`: what the multi-instance tests watch to prove that no descriptor of an
/// open database's files was closed behind SQLite's back (closing any descriptor of a file drops every POSIX
/// lock the process holds on it).
public enum ProcessLocks {
    /// One lock: its kind (`READ`/`WRITE`) and byte range, as `/proc/locks` prints them.
    public struct Lock: Hashable, Sendable, CustomStringConvertible {
        /// `READ` or `WRITE`.
        public let kind: String
        /// The first byte locked.
        public let start: String
        /// The last byte locked (`EOF` for a lock to the end).
        public let end: String
        /// `READ 1073741826-1073742335`.
        public var description: String { "\(kind) \(start)-\(end)" }
    }

    /// Whether this system shows locks in `/proc/locks`.
    public static var isAvailable: Bool { FileManager.default.isReadableFile(atPath: "/proc/locks") }

    /// The POSIX locks this process holds on the file at `path` (none when it does not exist).
    public static func held(on path: String) -> Set<Lock> {
        var info = stat()
        guard stat(path, &info) == 0,
            let table = try? String(contentsOfFile: "/proc/locks", encoding: .utf8)
        else { return [] }
        let device = String(format: "%02x:%02x:%llu", major(info.st_dev), minor(info.st_dev), UInt64(info.st_ino))
        let pid = String(getpid())
        var locks: Set<Lock> = []
        for line in table.split(separator: "\n") {
            // `1: POSIX  ADVISORY  READ 4242 08:02:131 1073741826 1073742335`; a blocked waiter's line has `->`.
            let fields = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            guard fields.count >= 8, fields[1] == "POSIX", fields[4] == pid, fields[5] == device else { continue }
            locks.insert(Lock(kind: fields[3], start: fields[6], end: fields[7]))
        }
        return locks
    }

    /// How many descriptors this process has open on the file at `path` (by device and inode).
    public static func openDescriptors(on path: String) -> Int {
        var target = stat()
        guard stat(path, &target) == 0,
            let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        else { return 0 }
        return entries.filter { entry in
            var info = stat()
            return stat("/proc/self/fd/" + entry, &info) == 0 && info.st_dev == target.st_dev && info.st_ino == target.st_ino
        }.count
    }

    private static func major(_ device: dev_t) -> UInt32 {
        UInt32((UInt64(device) >> 8) & 0xfff) | UInt32((UInt64(device) >> 32) & ~0xfff)
    }
    private static func minor(_ device: dev_t) -> UInt32 {
        UInt32(UInt64(device) & 0xff) | UInt32((UInt64(device) >> 12) & ~0xff)
    }
}
