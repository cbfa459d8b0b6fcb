import Crypto
import Foundation
import _CryptoExtras

/// Test-side key derivation, independent of Coffer's: the SQLCipher raw-key spec `x'<hex>'` for the file at
/// `path`, derived from its salt with swift-crypto's PBKDF2 (by default Coffer's PBKDF2-HMAC-SHA512 256,000).
/// Given to the `sqlcipher` shell as the key, it opens a file written with that derivation: the shell treats
/// a 67-character `x'…'` key as raw.
public enum ShellRawKey {
    /// A file without a 16-byte salt.
    public struct NoSalt: Error {}

    /// The raw-key spec of `passphrase` for the file at `path`.
    public static func spec(passphrase: String, path: String, sha512: Bool = true, rounds: Int = 256_000) throws -> String {
        guard let salt = FileHandle(forReadingAtPath: path)?.readData(ofLength: 16), salt.count == 16 else { throw NoSalt() }
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(passphrase.utf8), salt: salt, using: sha512 ? .sha512 : .insecureSHA1, outputByteCount: 32,
            unsafeUncheckedRounds: rounds)
        return "x'" + key.withUnsafeBytes { $0.map { String(format: "%02x", $0) }.joined() } + "'"
    }
}
