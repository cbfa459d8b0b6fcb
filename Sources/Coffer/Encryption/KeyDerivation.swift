import Crypto
import Foundation
import _CryptoExtras

/// The key material a database's connections open with: SQLCipher's raw-key specification.
///
/// Passphrases are stretched once, here, with the same PBKDF2-HMAC-SHA1 SQLCipher 3 would run, over
/// the salt in the file's first 16 bytes. Every connection then opens with the derived key in raw form,
/// so only the first open pays for key derivation and the file stays readable with the passphrase by
/// any SQLCipher 3 client.
struct DatabaseKey: Sendable {
    /// `x'<key>'` for existing files, `x'<key><salt>'` for new ones (SQLCipher writes that salt).
    let keySpec: SecureBytes
    /// The derived (or raw) 32-byte key, kept to reopen connections and to derive backup keys.
    let key: SecureBytes
    /// The salt, when Coffer chose or read it.
    let salt: [UInt8]?
    /// The passphrase or raw key itself, kept wipeable for what must not depend on the file's salt: the
    /// backup's repair material is keyed from it so that it still opens when the salt is destroyed.
    let secret: SecureBytes
    /// Whether `secret` is a passphrase (stretched with PBKDF2) or a raw key.
    let secretIsRawKey: Bool

    /// The encryption this key was made from, rebuilt from the wipeable copy for the duration of a call
    /// (the database's public configuration holds no secret).
    var encryption: Encryption {
        let bytes = secret.withUnsafeBytes { Data($0) }
        return secretIsRawKey ? .rawKey(bytes) : .passphraseData(bytes)
    }

    /// Size of SQLCipher's salt, stored in clear at the start of the file.
    static let saltSize = 16
    /// Size of an AES-256 key.
    static let keySize = 32

    /// Derives the key for the database at `path` (which may not exist yet).
    static func make(for encryption: Encryption, path: String, options: CipherOptions) throws -> DatabaseKey? {
        guard let secret = encryption.secretBytes else { return nil }
        let existingSalt = try readSalt(path: path)
        if case .rawKey = encryption {
            guard secret.count == keySize else {
                throw CofferError(code: .invalidConfiguration, message: "a raw key must be \(keySize) bytes, not \(secret.count)")
            }
            // SQLCipher chooses the salt of a new file itself when given a raw key alone.
            return DatabaseKey(
                keySpec: SecureBytes.rawKeySpec(key: secret, salt: nil), key: secret, salt: existingSalt,
                secret: secret, secretIsRawKey: true)
        }
        let salt = existingSalt ?? randomSalt()
        let key = try derive(secret: secret, salt: salt, iterations: options.kdfIterations)
        let spec = SecureBytes.rawKeySpec(key: key, salt: existingSalt == nil ? salt : nil)
        return DatabaseKey(keySpec: spec, key: key, salt: salt, secret: secret, secretIsRawKey: false)
    }

    /// The key specification for connections opened after the file exists (no salt part).
    func existingFileSpec() -> SecureBytes {
        SecureBytes.rawKeySpec(key: key, salt: nil)
    }

    /// PBKDF2-HMAC-SHA1, as SQLCipher 3 derives its page key.
    static func derive(secret: SecureBytes, salt: [UInt8], iterations: Int) throws -> SecureBytes {
        let derived = try secret.withUnsafeBytes { password in
            try KDF.Insecure.PBKDF2.deriveKey(
                from: password, salt: salt, using: .insecureSHA1,
                outputByteCount: keySize, unsafeUncheckedRounds: iterations)
        }
        return derived.withUnsafeBytes { SecureBytes(Array($0)) }
    }

    /// The first 16 bytes of an existing, non-empty file; nil when there is no such file yet.
    static func readSalt(path: String) throws -> [UInt8]? {
        guard path != ":memory:", let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = (try? handle.read(upToCount: saltSize)) ?? Data()
        if head.isEmpty { return nil }
        guard head.count == saltSize else {
            throw CofferError(code: .notADatabase, message: "file is too short to be a database")
        }
        return Array(head)
    }

    static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<saltSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
