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
    /// A passphrase, stretched with ``CipherOptions/keyDerivation`` (PBKDF2-HMAC-SHA512 by default).
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
    package var redacted: Encryption {
        switch self {
        case .none: return .none
        case .passphrase: return .passphrase("")
        case .passphraseData: return .passphraseData(Data())
        case .rawKey: return .rawKey(Data())
        }
    }

    /// The passphrase's or raw key's bytes in a wipeable buffer (nil for ``none``).
    package var bytes: SecureBytes? {
        switch self {
        case .none: return nil
        case .passphrase(let text): return SecureBytes(consuming: text.utf8)
        case .passphraseData(let data), .rawKey(let data): return SecureBytes(consuming: data)
        }
    }
}

extension Encryption {
    /// The passphrase stored in the file at `path`: its bytes, without one trailing newline (`\n` or `\r\n`),
    /// as `echo secret > key` leaves it. Nil when the file cannot be read. The one reader of passphrase files
    /// (the `coffer` CLI's `--passphrase-file`, the corruption tool's).
    public static func passphraseFile(atPath path: String) -> Encryption? {
        guard var data = FileManager.default.contents(atPath: path) else { return nil }
        if data.last == UInt8(ascii: "\n") { data.removeLast() }
        if data.last == UInt8(ascii: "\r") { data.removeLast() }
        return .passphraseData(data)
    }
}
