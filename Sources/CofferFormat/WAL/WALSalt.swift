// WALSalt — a SQLCipher file's salt from its WAL, when the main file's copy is destroyed.
//
// Page 1 of a SQLCipher file begins with the 16-byte salt in clear, and a WAL frame holds a page exactly as
// the main file would (encrypted, the salt in clear). Every commit that changes the header (the page count
// when the file grows, the schema cookie) writes a frame of page 1, so the salt is often in the WAL even
// when the main file's first bytes are gone. It is taken from the newest intact committed frame of page 1
// and used only if pages then authenticate with it: a wrong salt authenticates nothing, so it can never
// produce a row.

import Foundation

extension DatabaseFile {
    /// The salt in the first 16 bytes of the newest intact committed frame of page 1 in the WAL at
    /// `walPath`, or nil when there is none.
    public static func saltFromWAL(_ walPath: String) -> [UInt8]? {
        guard let map = WALFrameMap(path: walPath),
            let frame = map.committed.last(where: { $0.intact && $0.pageNumber == 1 }),
            let wal = ReadOnlyFile(path: walPath)
        else { return nil }
        guard let salt = wal.read(at: frame.bodyOffset, count: 16), salt.count == 16,
            Set(salt).count > 4
        else { return nil }
        return salt
    }

    /// Runs `open` with the file's own salt (`salt` nil) and, when no page authenticates with it, once more
    /// with the salt of page 1's newest frame in `<path>-wal` (when that differs): the way past a destroyed
    /// page 1 or header whose WAL still holds page 1.
    public static func withWALSaltFallback(
        path: String, salt: [UInt8]?, _ open: ([UInt8]?) throws(DatabaseFileError) -> DatabaseFile
    ) throws(DatabaseFileError) -> DatabaseFile {
        do { return try open(salt) } catch {
            guard salt == nil, error == .wrongKey || error == .saltDamagedOrWrongKey,
                let walSalt = saltFromWAL(path + "-wal"), walSalt != (try? FileSalt.read(path: path))
            else { throw error }
            return try open(walSalt)
        }
    }
}
