import CofferFormat
import Foundation

/// How a passphrase is stretched into a database's 256-bit page key, over the salt in the file's first
/// 16 bytes.
///
/// ```swift
/// var cipher = CipherOptions()
/// cipher.keyDerivation = .pbkdf2SHA512(rounds: 500_000)   // new files; existing ones are detected
/// ```
public struct KeyDerivation: Sendable, Hashable, CustomStringConvertible {
    /// The hash of PBKDF2-HMAC (CofferFormat's `KDFAlgorithm`, the one name across modules).
    public var algorithm: KDFAlgorithm
    /// PBKDF2 iterations.
    public var rounds: Int

    /// PBKDF2-HMAC-SHA512 with `rounds` iterations.
    public static func pbkdf2SHA512(rounds: Int) -> KeyDerivation { KeyDerivation(algorithm: .sha512, rounds: rounds) }

    /// PBKDF2-HMAC-SHA1 with `rounds` iterations (SQLCipher 3's `kdf_iter`).
    public static func pbkdf2SHA1(rounds: Int) -> KeyDerivation { KeyDerivation(algorithm: .sha1, rounds: rounds) }

    /// Coffer's default (CofferFormat's `CipherSettings.coffer`, where SQLCipher's constants live): PBKDF2-HMAC-SHA512,
    /// 256,000 rounds, as SQLCipher 4 (above the 210,000 that current
    /// password-storage guidance asks of PBKDF2-HMAC-SHA512).
    public static let coffer = KeyDerivation(
        algorithm: CipherSettings.coffer.kdfAlgorithm, rounds: CipherSettings.coffer.kdfRounds)

    /// SQLCipher 3's default and every Coffer file before this one: PBKDF2-HMAC-SHA1, 64,000 rounds.
    public static let sqlcipher3 = KeyDerivation(
        algorithm: CipherSettings.sqlcipher3.kdfAlgorithm, rounds: CipherSettings.sqlcipher3.kdfRounds)

    public var description: String {
        "\(algorithm.displayName) \(rounds) rounds"
    }

    /// The 32-byte key PBKDF2 derives from `passphrase` and `salt` (CofferFormat's one PBKDF2,
    /// `KDFAlgorithm.derive`).
    func derive(passphrase: SecureBytes, salt: [UInt8]) throws -> SecureBytes {
        var output = [UInt8](repeating: 0, count: DatabaseKey.keySize)
        defer { SecureBytes.wipe(&output) }
        do {
            try passphrase.withUnsafeBytes { try algorithm.derive(password: $0, salt: salt, rounds: rounds, into: &output) }
        } catch {
            throw CofferError(code: .invalidConfiguration, message: "\(algorithm.displayName) failed")
        }
        return SecureBytes(output)
    }
}

extension KeyDerivation {
    /// The derivation `settings` stretch a passphrase with; nil when they stretch none (`kdfRounds` 0).
    public init?(settings: CipherSettings) {
        guard settings.kdfRounds > 0 else { return nil }
        self.init(algorithm: settings.kdfAlgorithm, rounds: settings.kdfRounds)
    }
}
