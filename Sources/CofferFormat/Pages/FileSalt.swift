// FileSalt — the 16 bytes in clear at the start of a SQLCipher file. They salt the page key's derivation
// and, XORed with 0x3a, the HMAC key's; SQLite's magic string stands there once the page is decrypted.

import Crypto
import Foundation

/// The salt of a SQLCipher file (page 1, bytes 0–15, stored in clear).
public enum FileSalt {
    /// The salt's size in bytes.
    public static let size = 16

    /// The first 16 bytes of the file at `path`; nil when the file is empty (not written yet).
    ///
    /// - Throws: ``DatabaseFileError/cannotOpen(_:)`` when the file cannot be opened,
    ///   ``DatabaseFileError/tooSmall`` when it holds fewer than 16 bytes.
    public static func read(path: String) throws(DatabaseFileError) -> [UInt8]? {
        guard let file = ReadOnlyFile(path: path), let head = file.readUpTo(size, at: 0) else { throw .cannotOpen(path) }
        if head.isEmpty { return nil }
        guard head.count == size else { throw .tooSmall }
        return head
    }
}

/// The checksum backup repair material records for each leaf page and a salvage compares against.
public enum PageChecksum {
    /// The first 8 bytes of SHA-256 of `bytes` (a page exactly as stored), lowercase hex.
    public static func of(_ bytes: [UInt8]) -> String {
        let digest = SHA256.hash(data: bytes)
        return digest.prefix(8).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined()
    }
}

extension Collection where Element == UInt8 {
    /// Whether every byte is zero: a zero-filled page, which SQLCipher reads as zeros without checking its
    /// HMAC (but never writes).
    public var isAllZeroBytes: Bool { allSatisfy { $0 == 0 } }
}
