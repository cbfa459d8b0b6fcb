import CofferFormat
import Foundation

/// The key material derived from a database's ``Encryption`` (the app's secret), which its connections open
/// with: SQLCipher's raw-key specification.
///
/// Passphrases are stretched once, here, with the configured ``KeyDerivation`` over the salt in the
/// file's first 16 bytes (for an existing file, the derivation and page size it was written with are
/// found first: see CipherDetection). Every connection then opens with the derived key in raw form, so
/// only the first open pays for key derivation.
package struct DatabaseKey: Sendable {
    /// `x'<key>'` for existing files, `x'<key><salt>'` for new ones (SQLCipher writes that salt).
    let keySpec: SecureBytes
    /// The derived (or raw) 32-byte key, kept to reopen connections and to derive backup keys.
    package let key: SecureBytes
    /// The salt, when Coffer chose or read it.
    package let salt: [UInt8]?
    /// The ``Encryption``'s bytes (the passphrase or raw key itself), kept wipeable for what must not depend on the file's salt: the
    /// backup's repair material is keyed from it so that it still opens when the salt is destroyed.
    let encryptionBytes: SecureBytes
    /// Whether `encryptionBytes` are a passphrase (stretched with PBKDF2) or a raw key.
    let isRawKey: Bool
    /// The derivation that made `key` (nil for a raw key).
    package let derivation: KeyDerivation?
    /// The page size connections set: the file's own when found, else the configured one.
    package let pageSize: Int
    /// For an existing file under which page 1 did not authenticate: the settings tried, for the
    /// wrong-passphrase message. Nil when the settings were proven (or could not be checked).
    let unprovenAfterTrying: String?
    /// The file's page format: SQLCipher 3's (what Coffer writes) unless CipherDetection found a SQLCipher 4
    /// file, which only a Coffer built against SQLCipher 4 opens.
    package var pageFormat: LinkedSQLCipher.PageFormat = .sqlcipher3

    /// The encryption this key was made from, rebuilt from the wipeable copy for the duration of a call
    /// (the database's public configuration holds no secret).
    var encryption: Encryption {
        let bytes = encryptionBytes.withUnsafeBytes { Data($0) }
        return isRawKey ? .rawKey(bytes) : .passphraseData(bytes)
    }

    /// Size of SQLCipher's salt, stored in clear at the start of the file.
    static let saltSize = FileSalt.size
    /// Size of an AES-256 key.
    static let keySize = 32

    /// Derives the key for the database at `path` (which may not exist yet). For an existing file, the
    /// derivation and page size are those under which page 1 authenticates (see CipherDetection).
    package static func make(for encryption: Encryption, path: String, options: CipherOptions) throws -> DatabaseKey? {
        guard let bytes = encryption.bytes else { return nil }
        let existingSalt = try readSalt(path: path)
        let isRawKey: Bool
        if case .rawKey = encryption { isRawKey = true } else { isRawKey = false }
        if isRawKey, bytes.count != keySize {
            throw CofferError(code: .invalidConfiguration, message: "a raw key must be \(keySize) bytes, not \(bytes.count)")
        }
        if let existingSalt {
            return try CipherDetection.key(
                encryptionBytes: bytes, isRawKey: isRawKey, path: path, salt: existingSalt, options: options)
        }
        if isRawKey {
            // SQLCipher chooses the salt of a new file itself when given a raw key alone.
            return DatabaseKey(
                keySpec: SecureBytes.rawKeySpec(key: bytes, salt: nil), key: bytes, salt: nil, encryptionBytes: bytes,
                isRawKey: true, derivation: nil, pageSize: options.pageSize, unprovenAfterTrying: nil)
        }
        let salt = randomSalt()
        let key = try options.keyDerivation.derive(passphrase: bytes, salt: salt)
        return DatabaseKey(
            keySpec: SecureBytes.rawKeySpec(key: key, salt: salt), key: key, salt: salt, encryptionBytes: bytes, isRawKey: false,
            derivation: options.keyDerivation, pageSize: options.pageSize, unprovenAfterTrying: nil)
    }

    /// The key a rekey writes: `encryption` derived with `derivation` over the file's existing `salt`
    /// (a rekey keeps the salt, the page size and the page format).
    static func rekeyed(
        to encryption: Encryption, derivation: KeyDerivation, salt: [UInt8], pageSize: Int,
        pageFormat: LinkedSQLCipher.PageFormat = .sqlcipher3
    ) throws -> DatabaseKey? {
        guard let bytes = encryption.bytes else { return nil }
        if case .rawKey = encryption {
            guard bytes.count == keySize else {
                throw CofferError(code: .invalidConfiguration, message: "a raw key must be \(keySize) bytes, not \(bytes.count)")
            }
            return DatabaseKey(
                keySpec: SecureBytes.rawKeySpec(key: bytes, salt: nil), key: bytes, salt: salt, encryptionBytes: bytes,
                isRawKey: true, derivation: nil, pageSize: pageSize, unprovenAfterTrying: nil, pageFormat: pageFormat)
        }
        let key = try derivation.derive(passphrase: bytes, salt: salt)
        return DatabaseKey(
            keySpec: SecureBytes.rawKeySpec(key: key, salt: nil), key: key, salt: salt, encryptionBytes: bytes, isRawKey: false,
            derivation: derivation, pageSize: pageSize, unprovenAfterTrying: nil, pageFormat: pageFormat)
    }

    /// The key specification for connections opened after the file exists (no salt part).
    func existingFileSpec() -> SecureBytes {
        SecureBytes.rawKeySpec(key: key, salt: nil)
    }

    /// The first 16 bytes of an existing, non-empty file; nil when there is no such file yet.
    package static func readSalt(path: String) throws -> [UInt8]? {
        guard path != ":memory:" else { return nil }
        do { return try FileSalt.read(path: path) } catch {
            if case .tooSmall = error { throw CofferError(code: .notADatabase, message: "file is too short to be a database") }
            return nil
        }
    }

    package static func randomSalt() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<saltSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }
}
