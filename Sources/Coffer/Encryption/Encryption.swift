import Foundation

/// How a database is encrypted: not at all, with a passphrase, or with a raw 256-bit key.
///
/// Descriptions never show the secret:
///
/// ```swift
/// let encryption = Encryption.passphrase("correct horse")
/// print(encryption)   // passphrase(<redacted>)
/// ```
public enum Encryption: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// A plaintext database.
    case none
    /// A passphrase, stretched with PBKDF2-HMAC-SHA1 as SQLCipher 3 does.
    case passphrase(String)
    /// A passphrase given as bytes (any encoding the app chooses).
    case passphraseData(Data)
    /// A raw 32-byte AES-256 key, used as is (no key derivation).
    case rawKey(Data)

    /// True for every case but ``none``.
    public var isEncrypted: Bool {
        if case .none = self { return false }
        return true
    }

    public var description: String {
        switch self {
        case .none: return "none"
        case .passphrase: return "passphrase(<redacted>)"
        case .passphraseData: return "passphraseData(<redacted>)"
        case .rawKey: return "rawKey(<redacted>)"
        }
    }

    public var debugDescription: String { description }

    public var customMirror: Mirror { Mirror(self, children: [:]) }

    /// The same kind of encryption with the secret removed: what a database keeps once it has derived its
    /// key, so the passphrase does not live as long as the database.
    var redacted: Encryption {
        switch self {
        case .none: return .none
        case .passphrase: return .passphrase("")
        case .passphraseData: return .passphraseData(Data())
        case .rawKey: return .rawKey(Data())
        }
    }

    /// The secret's bytes in a wipeable buffer.
    var secretBytes: SecureBytes? {
        switch self {
        case .none: return nil
        case .passphrase(let text): return SecureBytes(consuming: text.utf8)
        case .passphraseData(let data), .rawKey(let data): return SecureBytes(consuming: data)
        }
    }
}

/// SQLCipher's cipher settings. Coffer's defaults are SQLCipher 3's, except the page size.
public struct CipherOptions: Sendable, Hashable, CustomStringConvertible {
    /// The page size in bytes, a power of two from 512 to 65536. Default 4096 (SQLCipher 3 uses 1024).
    public var pageSize: Int
    /// PBKDF2 iterations for passphrases. Default 64000.
    public var kdfIterations: Int
    /// Whether each page carries an HMAC-SHA1. Default true.
    public var usesHMAC: Bool

    /// Creates cipher options.
    public init(pageSize: Int = 4096, kdfIterations: Int = 64000, usesHMAC: Bool = true) {
        self.pageSize = pageSize
        self.kdfIterations = kdfIterations
        self.usesHMAC = usesHMAC
    }

    /// Throws when a value is out of range.
    func validate() throws {
        guard (512...65536).contains(pageSize), pageSize & (pageSize - 1) == 0 else {
            throw CofferError(
                code: .invalidConfiguration, message: "page size must be a power of two from 512 to 65536, not \(pageSize)")
        }
        guard kdfIterations >= 1 else {
            throw CofferError(code: .invalidConfiguration, message: "KDF iterations must be at least 1")
        }
    }

    public var description: String {
        "AES-256-CBC, page size \(pageSize), PBKDF2-HMAC-SHA1 \(kdfIterations) iterations, HMAC \(usesHMAC ? "SHA1" : "off")"
    }
}
