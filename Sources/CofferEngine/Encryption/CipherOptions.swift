import CofferFormat

/// SQLCipher's cipher settings: page size, HMAC, and how a passphrase becomes the page key.
///
/// The default derives new files' keys with PBKDF2-HMAC-SHA512 and 256,000 rounds (``KeyDerivation/coffer``);
/// pages keep SQLCipher 3's format (AES-256-CBC, HMAC-SHA1, 48 reserved bytes), so the linked SQLCipher
/// 3.4.1 reads them with the raw key Coffer derives. ``sqlcipher3`` writes files the `sqlcipher` 3.x shell
/// opens with the passphrase and nothing else:
///
/// ```swift
/// let interop = Configuration(encryption: .passphrase("pw"), cipher: .sqlcipher3)
/// ```
///
/// An existing file opens whatever it was written with: see ``detectsExistingSettings``.
///
/// Options and settings are two types on purpose: `CipherOptions` is what a ``Configuration`` asks of the
/// linked SQLCipher 3.4.1 (which writes only AES-256-CBC pages with HMAC-SHA1 or none) plus how to open
/// existing files; CofferFormat's `CipherSettings` describes any file's page cipher (SQLCipher 1–4, Coffer,
/// plaintext) for the page decoder, repair material, `coffer info` and the repair engine. The conversions
/// are ``settings(derivation:)`` and ``init(settings:)``, lossless for what SQLCipher 3.4.1 writes.
public struct CipherOptions: Sendable, Hashable, CustomStringConvertible {
    /// The page size in bytes of new files, a power of two from 512 to 65536. Default 4096 (SQLCipher 3
    /// uses 1024). An existing file keeps its own, found from the key (see ``detectsExistingSettings``).
    public var pageSize: Int
    /// How a passphrase becomes the page key of new files, and the first derivation tried on existing
    /// ones. Default ``KeyDerivation/coffer`` (PBKDF2-HMAC-SHA512, 256,000 rounds). Raw keys skip it.
    public var keyDerivation: KeyDerivation
    /// Whether each page carries an HMAC-SHA1. Default true.
    public var usesHMAC: Bool
    /// Whether an existing file that does not authenticate under ``keyDerivation`` and ``pageSize`` is tried
    /// with SQLCipher 3's derivation (``KeyDerivation/sqlcipher3``), then Coffer's default
    /// (``KeyDerivation/coffer``), and every page size before the key is declared wrong. Each try checks page 1's HMAC, so only a derivation costs time. Default true; without
    /// HMAC nothing can be checked and only the configured settings are used.
    public var detectsExistingSettings: Bool

    /// Creates cipher options.
    public init(
        pageSize: Int = 4096, keyDerivation: KeyDerivation = .coffer, usesHMAC: Bool = true,
        detectsExistingSettings: Bool = true
    ) {
        self.pageSize = pageSize
        self.keyDerivation = keyDerivation
        self.usesHMAC = usesHMAC
        self.detectsExistingSettings = detectsExistingSettings
    }

    /// SQLCipher 3.4.1's own defaults: PBKDF2-HMAC-SHA1 with 64,000 rounds and 1024-byte pages, so the
    /// `sqlcipher` 3.x shell and any SQLCipher 3 client open the file with the passphrase alone. The
    /// derivation is the weaker one SQLCipher 4 left behind: use it only for that interoperability.
    /// (Files of earlier Coffer versions are SHA-1 with 4096-byte pages; they open under any options.)
    public static let sqlcipher3 = CipherOptions(pageSize: 1024, keyDerivation: .sqlcipher3)

    /// Options that write files with `settings`' page cipher and page size (4096 when it leaves the page size
    /// to detection); nil for settings the linked SQLCipher 3.4.1 cannot write (plaintext, HMAC-SHA512, a
    /// reserve other than SQLCipher 3's).
    ///
    /// ```swift
    /// let options = CipherOptions(settings: file.settings.with(pageSize: file.pageSize))
    /// ```
    public init?(settings: CipherSettings) {
        guard settings.isEncrypted, settings.hmacAlgorithm != .sha512,
            settings.reserveBytes == CipherSettings.defaultReserve(for: settings.hmacAlgorithm)
        else { return nil }
        self.init(
            pageSize: settings.pageSize ?? 4096, keyDerivation: KeyDerivation(settings: settings) ?? .coffer,
            usesHMAC: settings.hmacAlgorithm == .sha1)
    }

    /// The page cipher these options write, as CofferFormat's `CipherSettings` named after its profile
    /// ("coffer", "sqlcipher3" or "custom"): the page key by `derivation` (nil for a raw key: `kdfRounds` 0),
    /// SQLCipher 3's page format (its HMAC key by PBKDF2-HMAC-SHA1), ``pageSize``.
    public func settings(derivation: KeyDerivation?) -> CipherSettings {
        var settings = CipherSettings.sqlcipher3.with(pageSize: pageSize)
        settings.kdfRounds = derivation?.rounds ?? 0
        if derivation?.algorithm == .sha512 {
            settings.kdfAlgorithm = .sha512
            settings.hmacKeyAlgorithm = .sha1
        }
        if !usesHMAC {
            settings.hmacAlgorithm = .none
            settings.reserveBytes = CipherSettings.defaultReserve(for: .none)
        }
        return settings.named()
    }

    /// Settings spelled out in a report or in repair material (`kdfName` as `CipherSettings.kdfName` writes
    /// it: a raw key's is not a derivation), read back.
    package static func settings(kdfName: String, rounds: Int, usesHMAC: Bool, pageSize: Int) -> CipherSettings {
        let derivation = KDFAlgorithm(derivationName: kdfName).map { KeyDerivation(algorithm: $0, rounds: rounds) }
        return CipherOptions(pageSize: pageSize, usesHMAC: usesHMAC).settings(derivation: derivation)
    }

    /// Throws when a value is out of range.
    func validate() throws {
        guard (512...65536).contains(pageSize), pageSize & (pageSize - 1) == 0 else {
            throw CofferError(
                code: .invalidConfiguration, message: "page size must be a power of two from 512 to 65536, not \(pageSize)")
        }
        guard keyDerivation.rounds >= 1 else {
            throw CofferError(code: .invalidConfiguration, message: "key derivation rounds must be at least 1")
        }
    }

    public var description: String {
        "AES-256-CBC, page size \(pageSize), \(keyDerivation), HMAC \(usesHMAC ? "SHA1" : "off")"
    }
}
