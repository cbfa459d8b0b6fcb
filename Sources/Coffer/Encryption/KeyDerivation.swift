internal import COpenSSL
import CofferFormat
import Crypto
import Foundation
import _CryptoExtras

/// How a passphrase is stretched into a database's 256-bit page key, over the salt in the file's first
/// 16 bytes.
///
/// ```swift
/// var cipher = CipherOptions()
/// cipher.keyDerivation = .pbkdf2SHA512(rounds: 500_000)   // new files; existing ones are detected
/// ```
public struct KeyDerivation: Sendable, Hashable, CustomStringConvertible {
    /// The PRF of PBKDF2.
    public enum Algorithm: String, Sendable, Hashable, Codable {
        /// PBKDF2-HMAC-SHA1, SQLCipher 1–3's.
        case pbkdf2SHA1 = "pbkdf2-hmac-sha1"
        /// PBKDF2-HMAC-SHA512, SQLCipher 4's and Coffer's default.
        case pbkdf2SHA512 = "pbkdf2-hmac-sha512"
    }

    /// The PRF.
    public var algorithm: Algorithm
    /// PBKDF2 iterations.
    public var rounds: Int

    /// PBKDF2-HMAC-SHA512 with `rounds` iterations.
    public static func pbkdf2SHA512(rounds: Int) -> KeyDerivation { KeyDerivation(algorithm: .pbkdf2SHA512, rounds: rounds) }

    /// PBKDF2-HMAC-SHA1 with `rounds` iterations (SQLCipher 3's `kdf_iter`).
    public static func pbkdf2SHA1(rounds: Int) -> KeyDerivation { KeyDerivation(algorithm: .pbkdf2SHA1, rounds: rounds) }

    /// Coffer's default: PBKDF2-HMAC-SHA512, 256,000 rounds, as SQLCipher 4 (above the 210,000 that current
    /// password-storage guidance asks of PBKDF2-HMAC-SHA512).
    public static let coffer = pbkdf2SHA512(rounds: 256_000)

    /// SQLCipher 3's default and every Coffer file before this one: PBKDF2-HMAC-SHA1, 64,000 rounds.
    public static let sqlcipher3 = pbkdf2SHA1(rounds: 64_000)

    public var description: String {
        "\(algorithm == .pbkdf2SHA1 ? "PBKDF2-HMAC-SHA1" : "PBKDF2-HMAC-SHA512") \(rounds) rounds"
    }

    /// The 32-byte key PBKDF2 derives from `secret` and `salt`.
    ///
    /// SHA-1 runs on swift-crypto (BoringSSL, with the CPU's SHA extensions: twice as fast as the OpenSSL
    /// path SQLCipher 3.4.1 takes); SHA-512 on OpenSSL's libcrypto, which SQLCipher already loads and whose
    /// SHA-512 is faster than BoringSSL's (W0 first open 131–134 ms against 182–188 ms on the 2-core VM).
    func derive(secret: SecureBytes, salt: [UInt8]) throws -> SecureBytes {
        guard algorithm == .pbkdf2SHA512 else {
            let derived = try secret.withUnsafeBytes { password in
                try KDF.Insecure.PBKDF2.deriveKey(
                    from: password, salt: salt, using: .insecureSHA1, outputByteCount: DatabaseKey.keySize,
                    unsafeUncheckedRounds: rounds)
            }
            return derived.withUnsafeBytes { SecureBytes(Array($0)) }
        }
        var output = [UInt8](repeating: 0, count: DatabaseKey.keySize)
        defer { SecureBytes.wipe(&output) }
        let status = secret.withUnsafeBytes { password in
            PKCS5_PBKDF2_HMAC(
                password.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(password.count), salt, Int32(salt.count),
                Int32(clamping: rounds), EVP_sha512(), Int32(output.count), &output)
        }
        guard status == 1 else { throw CofferError(code: .invalidConfiguration, message: "PBKDF2-HMAC-SHA512 failed") }
        return SecureBytes(output)
    }
}

/// The key material a database's connections open with: SQLCipher's raw-key specification.
///
/// Passphrases are stretched once, here, with the configured ``KeyDerivation`` over the salt in the
/// file's first 16 bytes (for an existing file, the derivation and page size it was written with are
/// found first: see CipherDetection). Every connection then opens with the derived key in raw form, so
/// only the first open pays for key derivation.
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
    /// The derivation that made `key` (nil for a raw key).
    let derivation: KeyDerivation?
    /// The page size connections set: the file's own when found, else the configured one.
    let pageSize: Int
    /// For an existing file under which page 1 did not authenticate: the settings tried, for the
    /// wrong-passphrase message. Nil when the settings were proven (or could not be checked).
    let unprovenAfterTrying: String?

    /// The encryption this key was made from, rebuilt from the wipeable copy for the duration of a call
    /// (the database's public configuration holds no secret).
    var encryption: Encryption {
        let bytes = secret.withUnsafeBytes { Data($0) }
        return secretIsRawKey ? .rawKey(bytes) : .passphraseData(bytes)
    }

    /// Size of SQLCipher's salt, stored in clear at the start of the file.
    static let saltSize = FileSalt.size
    /// Size of an AES-256 key.
    static let keySize = 32

    /// Derives the key for the database at `path` (which may not exist yet). For an existing file, the
    /// derivation and page size are those under which page 1 authenticates (see CipherDetection).
    static func make(for encryption: Encryption, path: String, options: CipherOptions) throws -> DatabaseKey? {
        guard let secret = encryption.secretBytes else { return nil }
        let existingSalt = try readSalt(path: path)
        let isRawKey: Bool
        if case .rawKey = encryption { isRawKey = true } else { isRawKey = false }
        if isRawKey, secret.count != keySize {
            throw CofferError(code: .invalidConfiguration, message: "a raw key must be \(keySize) bytes, not \(secret.count)")
        }
        if let existingSalt {
            return try CipherDetection.key(
                secret: secret, isRawKey: isRawKey, path: path, salt: existingSalt, options: options)
        }
        if isRawKey {
            // SQLCipher chooses the salt of a new file itself when given a raw key alone.
            return DatabaseKey(
                keySpec: SecureBytes.rawKeySpec(key: secret, salt: nil), key: secret, salt: nil, secret: secret,
                secretIsRawKey: true, derivation: nil, pageSize: options.pageSize, unprovenAfterTrying: nil)
        }
        let salt = randomSalt()
        let key = try options.keyDerivation.derive(secret: secret, salt: salt)
        return DatabaseKey(
            keySpec: SecureBytes.rawKeySpec(key: key, salt: salt), key: key, salt: salt, secret: secret, secretIsRawKey: false,
            derivation: options.keyDerivation, pageSize: options.pageSize, unprovenAfterTrying: nil)
    }

    /// The key a rekey writes: `encryption` derived with `derivation` over the file's existing `salt`
    /// (a rekey keeps the salt and the page size).
    static func rekeyed(to encryption: Encryption, derivation: KeyDerivation, salt: [UInt8], pageSize: Int) throws
        -> DatabaseKey?
    {
        guard let secret = encryption.secretBytes else { return nil }
        if case .rawKey = encryption {
            guard secret.count == keySize else {
                throw CofferError(code: .invalidConfiguration, message: "a raw key must be \(keySize) bytes, not \(secret.count)")
            }
            return DatabaseKey(
                keySpec: SecureBytes.rawKeySpec(key: secret, salt: nil), key: secret, salt: salt, secret: secret,
                secretIsRawKey: true, derivation: nil, pageSize: pageSize, unprovenAfterTrying: nil)
        }
        let key = try derivation.derive(secret: secret, salt: salt)
        return DatabaseKey(
            keySpec: SecureBytes.rawKeySpec(key: key, salt: nil), key: key, salt: salt, secret: secret, secretIsRawKey: false,
            derivation: derivation, pageSize: pageSize, unprovenAfterTrying: nil)
    }

    /// The key specification for connections opened after the file exists (no salt part).
    func existingFileSpec() -> SecureBytes {
        SecureBytes.rawKeySpec(key: key, salt: nil)
    }

    /// The first 16 bytes of an existing, non-empty file; nil when there is no such file yet.
    static func readSalt(path: String) throws -> [UInt8]? {
        guard path != ":memory:" else { return nil }
        do { return try FileSalt.read(path: path) } catch {
            if case .tooSmall = error { throw CofferError(code: .notADatabase, message: "file is too short to be a database") }
            return nil
        }
    }

    static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<saltSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
