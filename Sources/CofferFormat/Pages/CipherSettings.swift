// CipherSettings — the parameters of a SQLCipher page codec.
//
// SQLCipher encrypts every page with AES-256-CBC. The last `reserveBytes` of each page hold the 16-byte IV,
// then (when HMAC is on) the HMAC of ciphertext ‖ IV ‖ page-number-LE, then unauthenticated padding.
// The version profiles differ only in these parameters:
//
// | profile | KDF            | rounds  | HMAC    | default page | reserve |
// |---------|----------------|---------|---------|--------------|---------|
// | 1.x     | PBKDF2-SHA1    | 4000    | none    | 1024         | 16      |
// | 2.x     | PBKDF2-SHA1    | 4000    | SHA-1   | 1024         | 48      |
// | 3.x     | PBKDF2-SHA1    | 64000   | SHA-1   | 1024         | 48      |
// | 4.x     | PBKDF2-SHA512  | 256000  | SHA-512 | 4096         | 80      |
// | coffer  | PBKDF2-SHA512  | 256000  | SHA-1   | 4096         | 48      |
//
// The HMAC key is PBKDF2(kdf hash, encryption key, salt XOR 0x3a, 2 rounds, 32 bytes) — except in Coffer's
// default files: Coffer derives the page key itself with PBKDF2-SHA512 and hands SQLCipher 3.4.1 the raw
// key, whose page format (HMAC-SHA1, HMAC key by PBKDF2-SHA1) is unchanged (`hmacKeyAlgorithm`).

/// The per-page authentication code algorithm.
public enum HMACAlgorithm: String, Sendable, Codable {
    /// No per-page HMAC (SQLCipher 1.x).
    case none
    /// HMAC-SHA1, 20 bytes (SQLCipher 2–3).
    case sha1
    /// HMAC-SHA512, 64 bytes (SQLCipher 4).
    case sha512

    /// The length in bytes of the stored authentication code.
    public var length: Int {
        switch self {
        case .none: return 0
        case .sha1: return 20
        case .sha512: return 64
        }
    }
}

/// The parameters of a SQLCipher page codec, or plaintext.
///
/// ```swift
/// var settings = CipherSettings.sqlcipher3
/// settings.pageSize = 4096
/// ```
public struct CipherSettings: Sendable, Codable, Hashable {
    /// A short name of the profile, used in reports ("sqlcipher3", "plaintext", …).
    public var name: String
    /// Whether pages are encrypted at all.
    public var isEncrypted: Bool
    /// PBKDF2 hash for the encryption key and the HMAC key.
    public var kdfAlgorithm: KDFAlgorithm
    /// PBKDF2 rounds for the encryption key (the HMAC key always uses 2); 0 where no passphrase is stretched
    /// (plaintext, or settings that describe a file opened with a raw key).
    public var kdfRounds: Int
    /// The per-page HMAC.
    public var hmacAlgorithm: HMACAlgorithm
    /// The page size, or `nil` to detect it from the file.
    public var pageSize: Int?
    /// Bytes reserved at the end of every page (IV + HMAC, rounded to 16).
    public var reserveBytes: Int
    /// The PBKDF2 hash of the HMAC key when it is not ``kdfAlgorithm`` (Coffer's profile: SHA-1); nil
    /// means the same.
    public var hmacKeyAlgorithm: KDFAlgorithm?

    /// Creates custom settings.
    public init(
        name: String, isEncrypted: Bool, kdfAlgorithm: KDFAlgorithm, kdfRounds: Int,
        hmacAlgorithm: HMACAlgorithm, pageSize: Int?, reserveBytes: Int, hmacKeyAlgorithm: KDFAlgorithm? = nil
    ) {
        self.name = name
        self.isEncrypted = isEncrypted
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfRounds = kdfRounds
        self.hmacAlgorithm = hmacAlgorithm
        self.pageSize = pageSize
        self.reserveBytes = reserveBytes
        self.hmacKeyAlgorithm = hmacKeyAlgorithm
    }

    /// SQLCipher 1.x: SHA-1 KDF with 4000 rounds, no HMAC, 1024-byte pages, 16 reserved bytes.
    public static let sqlcipher1 = CipherSettings(
        name: "sqlcipher1", isEncrypted: true, kdfAlgorithm: .sha1, kdfRounds: 4000,
        hmacAlgorithm: .none, pageSize: 1024, reserveBytes: 16)
    /// SQLCipher 2.x: SHA-1 KDF with 4000 rounds, HMAC-SHA1, 1024-byte pages, 48 reserved bytes.
    public static let sqlcipher2 = CipherSettings(
        name: "sqlcipher2", isEncrypted: true, kdfAlgorithm: .sha1, kdfRounds: 4000,
        hmacAlgorithm: .sha1, pageSize: 1024, reserveBytes: 48)
    /// SQLCipher 3.x: SHA-1 KDF with 64000 rounds, HMAC-SHA1, 48 reserved bytes. The page size is left to
    /// detection (the library default is 1024; Coffer writes 4096).
    public static let sqlcipher3 = CipherSettings(
        name: "sqlcipher3", isEncrypted: true, kdfAlgorithm: .sha1, kdfRounds: 64000,
        hmacAlgorithm: .sha1, pageSize: nil, reserveBytes: 48)
    /// SQLCipher 4.x: SHA-512 KDF with 256000 rounds, HMAC-SHA512, 4096-byte pages, 80 reserved bytes.
    public static let sqlcipher4 = CipherSettings(
        name: "sqlcipher4", isEncrypted: true, kdfAlgorithm: .sha512, kdfRounds: 256_000,
        hmacAlgorithm: .sha512, pageSize: 4096, reserveBytes: 80)
    /// Coffer's default: the page key by PBKDF2-HMAC-SHA512 with 256,000 rounds (Coffer derives it), pages in
    /// SQLCipher 3's format (HMAC-SHA1 keyed by PBKDF2-SHA1, reserve 48). The page size is left to detection.
    public static let coffer = CipherSettings(
        name: "coffer", isEncrypted: true, kdfAlgorithm: .sha512, kdfRounds: 256_000,
        hmacAlgorithm: .sha1, pageSize: nil, reserveBytes: 48, hmacKeyAlgorithm: .sha1)
    /// A plain SQLite file; page size and reserve come from the header when readable.
    public static let plaintext = CipherSettings(
        name: "plaintext", isEncrypted: false, kdfAlgorithm: .sha1, kdfRounds: 0,
        hmacAlgorithm: .none, pageSize: nil, reserveBytes: 0)

    /// Returns a copy with the given page size.
    public func with(pageSize: Int?) -> CipherSettings {
        var copy = self
        copy.pageSize = pageSize
        return copy
    }

    /// The key derivation as reports and stored material spell it: `pbkdf2-hmac-sha512`, `pbkdf2-hmac-sha1`,
    /// or `none (raw key)` when ``kdfRounds`` is 0.
    public var kdfName: String {
        kdfRounds == 0 ? "none (raw key)" : kdfAlgorithm.derivationName
    }

    /// The built-in profiles, for ``named()``.
    static let profiles: [CipherSettings] = [.coffer, .sqlcipher4, .sqlcipher3, .sqlcipher2, .sqlcipher1, .plaintext]

    /// A copy named after the built-in profile whose parameters these are (the page size and, for a raw
    /// key, the rounds aside), or "custom".
    public func named() -> CipherSettings {
        var copy = self
        let match = Self.profiles.first { profile in
            profile.isEncrypted == isEncrypted && profile.kdfAlgorithm == kdfAlgorithm
                && (profile.kdfRounds == kdfRounds || kdfRounds == 0 || !isEncrypted)
                && profile.hmacAlgorithm == hmacAlgorithm && profile.reserveBytes == reserveBytes
                && (profile.hmacKeyAlgorithm ?? profile.kdfAlgorithm) == (hmacKeyAlgorithm ?? kdfAlgorithm)
        }
        copy.name = match?.name ?? "custom"
        return copy
    }
}
