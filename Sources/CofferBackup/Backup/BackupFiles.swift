import CofferEngine
import CofferFormat
import CofferRecords
import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// File operations backups need to survive crashes: fsync, atomic rename, checksums.
enum BackupFiles {
    /// A temporary name in the same directory as `final`, so the rename is atomic.
    static func temporaryURL(for final: URL) -> URL {
        final.deletingLastPathComponent().appendingPathComponent(".tmp-\(UUID().uuidString.prefix(8))-\(final.lastPathComponent)")
    }

    /// Writes `data` to a temporary file, fsyncs it, renames it over `url` and fsyncs the directory.
    static func writeAtomically(_ data: Data, to url: URL) throws {
        let temporary = temporaryURL(for: url)
        guard FileManager.default.createFile(atPath: temporary.path, contents: data) else {
            throw CofferError(code: .cantOpen, message: "cannot write \(temporary.path)")
        }
        try commitFile(temporary, as: url)
    }

    /// fsyncs `temporary`, renames it to `final`, fsyncs the directory.
    static func commitFile(_ temporary: URL, as final: URL) throws {
        try fsyncFile(temporary.path)
        guard rename(temporary.path, final.path) == 0 else {
            throw CofferError(
                code: .ioError,
                message: "cannot rename \(temporary.lastPathComponent) to \(final.lastPathComponent): \(errnoText())")
        }
        try fsyncFile(final.deletingLastPathComponent().path)
    }

    /// fsync on a file or directory.
    static func fsyncFile(_ path: String) throws {
        guard let file = ReadOnlyFile(path: path) else {
            throw CofferError(code: .ioError, message: "cannot open \(path): \(errnoText())")
        }
        guard file.synchronize() else { throw CofferError(code: .ioError, message: "fsync \(path): \(errnoText())") }
    }

    /// SHA-256 of a file's contents, hex, read in 1 MiB chunks.
    static func sha256(of path: String) throws -> String {
        guard let file = ReadOnlyFile(path: path) else {
            throw CofferError(code: .fileNotFound, message: "no file at \(path)")
        }
        var hash = SHA256()
        var offset: UInt64 = 0
        while true {
            guard let chunk = file.readUpTo(1 << 20, at: offset) else {
                throw CofferError(code: .ioError, message: "read \(path): \(errnoText())")
            }
            if chunk.isEmpty { break }
            hash.update(data: chunk)
            offset += UInt64(chunk.count)
        }
        return hash.finalize().map { String(format: "%02x", $0) }.joined()
    }

    static func size(of path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// A file opened for page-sized positional reads and writes.
///
/// Read-only, it borrows its descriptor from the process's descriptor table (CofferFormat's
/// `DescriptorTable`): it may be a live database's file, whose descriptors must not be closed while this
/// process's connections hold locks on it. Writable files (backups, restore's temporary copy) are never a
/// live database's, and own their descriptor.
final class PageFile {
    let descriptor: Int32
    let path: String
    private let borrowed: ReadOnlyFile?

    init(path: String, writable: Bool, create: Bool = false) throws {
        self.path = path
        if writable {
            borrowed = nil
            descriptor = open(path, O_RDWR | O_CLOEXEC | (create ? O_CREAT | O_TRUNC : 0), 0o600)
        } else {
            borrowed = ReadOnlyFile(path: path)
            descriptor = borrowed?.descriptor ?? -1
        }
        guard descriptor >= 0 else {
            throw CofferError(
                code: errno == ENOENT ? .fileNotFound : .cantOpen, message: "cannot open \(path): \(BackupFiles.errnoText())")
        }
    }

    deinit { if borrowed == nil { close(descriptor) } }

    /// Reads `count` bytes at `offset`; fewer at the end of the file.
    func read(count: Int, at offset: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, count, off_t(offset)) }
        guard read >= 0 else { throw CofferError(code: .ioError, message: "read \(path): \(BackupFiles.errnoText())") }
        if read < count { buffer.removeSubrange(read...) }
        return buffer
    }

    func write(_ bytes: [UInt8], at offset: Int) throws {
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, bytes.count, off_t(offset)) }
        guard written == bytes.count else {
            throw CofferError(code: .ioError, message: "write \(path): \(BackupFiles.errnoText())")
        }
    }

    func truncate(to size: Int) throws {
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            throw CofferError(code: .ioError, message: "truncate \(path): \(BackupFiles.errnoText())")
        }
    }

    func sync() throws {
        guard fsync(descriptor) == 0 else {
            throw CofferError(code: .ioError, message: "fsync \(path): \(BackupFiles.errnoText())")
        }
    }

    var size: Int {
        var info = stat()
        return fstat(descriptor, &info) == 0 ? Int(info.st_size) : 0
    }
}
