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
enum InputCopy {
    /// Runs `body` with the path of a private copy of `path` and its journal files; removes the copy after.
    static func with<T>(_ path: String, _ body: (String) throws -> T) throws -> T {
        let fileManager = FileManager.default
        let directory = fileManager.temporaryDirectory.appendingPathComponent(
            "coffer-input-\(UUID().uuidString)", isDirectory: true)
        try fileManager.createDirectory(
            at: directory, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        defer { try? fileManager.removeItem(at: directory) }
        let copy = directory.appendingPathComponent(URL(fileURLWithPath: path).lastPathComponent).path
        do {
            for suffix in ["", "-wal", "-journal"] where suffix.isEmpty || fileManager.fileExists(atPath: path + suffix) {
                try fileManager.copyItem(atPath: path + suffix, toPath: copy + suffix)
            }
        } catch {
            throw CofferError(code: .ioError, message: "cannot make a private copy of \(path) to read it: \(error)")
        }
        return try body(copy)
    }
}
