import CofferFormat
import Foundation

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
