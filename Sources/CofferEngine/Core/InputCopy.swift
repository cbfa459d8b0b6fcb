import CofferFormat
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A private copy of an input database (main file and, when present, its `-wal` and `-journal`), so that
/// SQLite can read it without ever touching the original.
///
/// SQLite 3.15 writes through a connection that only reads: the last connection to close a WAL database
/// checkpoints the WAL into the main file and deletes the `-wal` (3.16 added the option to prevent it),
/// a hot `-journal` is rolled back into the main file at the first read, and opening a WAL file creates a
/// `-shm`. A file handed to `verify` or `info` is evidence, so those reads run on a copy in a fresh
/// directory only this user can enter, deleted afterwards. The `-shm` is never copied: SQLite rebuilds
/// it from the WAL.
package enum InputCopy {
    /// Runs `body` with the path of a private copy of `path` and its journal files; removes the copy after.
    package static func with<T>(_ path: String, _ body: (String) throws -> T) throws -> T {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent(
            "coffer-input-\(UUID().uuidString)", isDirectory: true)
        try fileManager.createDirectory(
            at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? fileManager.removeItem(at: directory) }
        let copy = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        for suffix in ["", "-wal", "-journal"] where suffix.isEmpty || fileManager.fileExists(atPath: path + suffix) {
            guard copyContents(of: path + suffix, to: copy + suffix) else {
                throw CofferError(code: .ioError, message: "cannot make a private copy of \(path + suffix) to read it")
            }
        }
        return try body(copy)
    }

    /// Runs `body` with a path SQLite can read `path` through without touching it, and whether that path
    /// must be opened immutable (``Configuration/opensImmutable``).
    ///
    /// When no `-wal`, `-journal` or `-shm` lies beside the file, nothing SQLite reads through them can
    /// differ from the main file, and nobody has the file open as a WAL database: `body` reads `path`
    /// itself, opened `immutable` (read-only, no locks, nothing created beside it), without a copy or the
    /// temporary space one takes. Opened that way, SQLite would not notice another process writing the
    /// file meanwhile, so the main file's size, modification and change times and inode and the absence
    /// of its side files are checked again after `body`: when anything changed, `body`'s answer is
    /// dropped and it runs again on a private copy, as it does from the start when a side file exists.
    /// So does an error `body` throws in place, or an answer `acceptsInPlace` refuses (`verify` confirms
    /// a damaged verdict on a copy): the copy's answer, or error, is the one returned.
    package static func withView<T>(
        _ path: String, acceptsInPlace: (T) -> Bool = { _ in true },
        _ body: (_ path: String, _ immutable: Bool) throws -> T
    ) throws -> T {
        if let before = FileState(path), !before.hasSideFiles, let result = try? body(path, true),
            FileState(path) == before, acceptsInPlace(result)
        {
            return result
        }
        return try with(path) { try body($0, false) }
    }

    /// What `withView` compares before and after reading a file in place.
    struct FileState: Equatable {
        let status: FileStatus
        let hasSideFiles: Bool

        init?(_ path: String) {
            guard let status = FileStatus(path: path) else { return nil }
            self.status = status
            hasSideFiles = DescriptorTable.companionSuffixes.contains { suffix in
                var side = stat()
                return lstat(path + suffix, &side) == 0 || errno != ENOENT
            }
        }
    }

    /// Copies the file at `source` into a new file at `destination`, reading through the descriptor table
    /// (the source may be a live database of this process: `FileManager.copyItem` would open and close a
    /// descriptor of its own, dropping the process's locks on it). False when either side fails.
    private static func copyContents(of source: String, to destination: String) -> Bool {
        guard let input = ReadOnlyFile(path: source),
            FileManager.default.createFile(atPath: destination, contents: nil, attributes: [.posixPermissions: 0o600]),
            let output = FileHandle(forWritingAtPath: destination)
        else { return false }
        defer { try? output.close() }
        var offset: UInt64 = 0
        while let chunk = input.readUpTo(1 << 20, at: offset) {
            if chunk.isEmpty { return true }
            do { try output.write(contentsOf: chunk) } catch { return false }
            offset += UInt64(chunk.count)
        }
        return false
    }
}
