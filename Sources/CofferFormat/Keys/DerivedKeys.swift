// DerivedKeys — the two keys a SQLCipher page codec needs, derived from the secret once per file.
//
//   encryption key = PBKDF2(kdf, passphrase, salt, rounds, 32), or the raw 32-byte key as it is
//   HMAC key       = PBKDF2(hmac kdf, encryption key, salt XOR 0x3a, 2, 32)
//
// The page key is kept in SecureBytes (wiped when the last copy goes), the HMAC key as a swift-crypto
// `SymmetricKey` (which wipes its own storage), built once because every authenticated page needs it.

import Crypto
import Foundation

/// The two keys a SQLCipher page codec needs, derived once per file and wiped when released.
public struct DerivedKeys: Sendable {
    /// The AES-256 page key.
    package let encryptionKey: SecureBytes
    /// The HMAC key (unused when the profile has no HMAC), built once, not for every page; swift-crypto wipes
    /// its storage when released.
    var hmacKey: SymmetricKey { hmacKeyBox.key }
    private let hmacKeyBox: ImmutableKey

    /// Derives the keys for `key` over `salt` (the file's first 16 bytes) with `settings`.
    ///
    /// - Throws: ``DatabaseFileError/keyRequired`` for ``Encryption/none``,
    ///   ``DatabaseFileError/invalidRawKey`` for a raw key that is not 32 bytes,
    ///   ``DatabaseFileError/keyDerivationFailed`` when the KDF itself fails.
    public init(key: Encryption, salt: [UInt8], settings: CipherSettings) throws(DatabaseFileError) {
        guard let secret = key.bytes else { throw .keyRequired }
        if case .rawKey = key {
            try self.init(rawKey: secret, salt: salt, settings: settings)
        } else {
            try self.init(passphrase: secret, salt: salt, settings: settings)
        }
    }

    /// Stretches `passphrase` with `settings`' key derivation over `salt`.
    package init(passphrase: SecureBytes, salt: [UInt8], settings: CipherSettings) throws(DatabaseFileError) {
        var stretched = [UInt8](repeating: 0, count: 32)
        defer { SecureBytes.wipe(&stretched) }
        try passphrase.withUnsafeBytes { (bytes) throws(DatabaseFileError) in
            try settings.kdfAlgorithm.derive(password: bytes, salt: salt, rounds: settings.kdfRounds, into: &stretched)
        }
        try self.init(rawKey: SecureBytes(stretched), salt: salt, settings: settings)
    }

    /// Uses `rawKey` (32 bytes) as the page key and derives the HMAC key from it.
    package init(rawKey: SecureBytes, salt: [UInt8], settings: CipherSettings) throws(DatabaseFileError) {
        guard rawKey.count == 32 else { throw .invalidRawKey }
        var hmacBytes = [UInt8](repeating: 0, count: 32)
        defer { SecureBytes.wipe(&hmacBytes) }
        try rawKey.withUnsafeBytes { (bytes) throws(DatabaseFileError) in
            try (settings.hmacKeyAlgorithm ?? settings.kdfAlgorithm).derive(
                password: bytes, salt: salt.map { $0 ^ 0x3a }, rounds: 2, into: &hmacBytes)
        }
        encryptionKey = rawKey
        hmacKeyBox = ImmutableKey(SymmetricKey(data: hmacBytes))
    }
}

/// A `SymmetricKey` shared between threads. swift-crypto does not declare the type Sendable, but a key is
/// never mutated after it is made (its storage is copy-on-write), so reading it from several threads is safe.
private final class ImmutableKey: @unchecked Sendable {
    let key: SymmetricKey
    init(_ key: SymmetricKey) { self.key = key }
}
