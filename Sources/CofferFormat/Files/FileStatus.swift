import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What `stat` says of a file that tells one version of it from another: which file it is, its size, and
/// its modification and status-change times to the nanosecond. Two equal statuses taken before and after
/// a read mean nothing wrote or replaced the file in between (as far as the file system's clock can tell).
package struct FileStatus: Equatable, Sendable {
    package let identity: FileIdentity
    package let size: Int64
    package let modifiedSeconds: Int64
    package let modifiedNanoseconds: Int64
    package let changedSeconds: Int64
    package let changedNanoseconds: Int64

    /// The status of the file at `path` (following links); nil when it cannot be read.
    package init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        identity = FileIdentity(info)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modifiedSeconds = Int64(info.st_mtimespec.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtimespec.tv_nsec)
        changedSeconds = Int64(info.st_ctimespec.tv_sec)
        changedNanoseconds = Int64(info.st_ctimespec.tv_nsec)
        #else
        modifiedSeconds = Int64(info.st_mtim.tv_sec)
        modifiedNanoseconds = Int64(info.st_mtim.tv_nsec)
        changedSeconds = Int64(info.st_ctim.tv_sec)
        changedNanoseconds = Int64(info.st_ctim.tv_nsec)
        #endif
    }
}
