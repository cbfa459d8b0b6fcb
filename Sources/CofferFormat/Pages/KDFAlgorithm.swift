import COpenSSL
import Crypto
import Foundation
import _CryptoExtras

/// The hash of PBKDF2-HMAC, the key derivation of every SQLCipher generation: the one name for it across
/// modules (Coffer's `KeyDerivation`, ``CipherSettings``, the CLI's `--kdf-algorithm`).
///
/// ```swift
/// var key = [UInt8](repeating: 0, count: 32)
/// try password.withUnsafeBytes { try KDFAlgorithm.sha512.derive(password: $0, salt: salt, rounds: 256_000, into: &key) }
/// ```
public enum KDFAlgorithm: String, Sendable, Hashable, Codable {
    /// PBKDF2-HMAC-SHA1 (SQLCipher 1–3).
    case sha1
    /// PBKDF2-HMAC-SHA512 (SQLCipher 4 and Coffer's default).
    case sha512

    /// The name reports and stored material spell: `pbkdf2-hmac-sha1`, `pbkdf2-hmac-sha512`.
    public var derivationName: String { self == .sha1 ? "pbkdf2-hmac-sha1" : "pbkdf2-hmac-sha512" }

    /// The algorithm whose ``derivationName`` is `name`, or nil (a raw key's "none (raw key)" among them).
    public init?(derivationName name: String) {
        guard let algorithm = [KDFAlgorithm.sha1, .sha512].first(where: { $0.derivationName == name }) else { return nil }
        self = algorithm
    }

    /// The name descriptions print: `PBKDF2-HMAC-SHA1`, `PBKDF2-HMAC-SHA512`.
    public var displayName: String { self == .sha1 ? "PBKDF2-HMAC-SHA1" : "PBKDF2-HMAC-SHA512" }

    /// PBKDF2-HMAC with this hash: fills `output` with the key stretched from `password` over `salt` in `rounds`
    /// iterations (at least 1). The one PBKDF2 of the page codecs: a passphrase's page key and the 2-round
    /// HMAC key alike.
    ///
    /// SHA-1 runs on swift-crypto (BoringSSL, with the CPU's SHA extensions: twice as fast as the OpenSSL path
    /// SQLCipher 3.4.1 takes); SHA-512 on OpenSSL's libcrypto, which SQLCipher already loads and whose SHA-512
    /// is faster than BoringSSL's, through `coffer_pbkdf2_hmac_sha512` (COpenSSL's shim): the HMAC pads hashed
    /// once, so 256,000 rounds cost their 512,000 SHA-512 compressions (110–115 ms on the 2-core VM) rather
    /// than `PKCS5_PBKDF2_HMAC`'s 175–195 ms.
    public func derive(
        password: UnsafeRawBufferPointer, salt: [UInt8], rounds: Int, into output: inout [UInt8]
    ) throws(DatabaseFileError) {
        let rounds = max(1, rounds)
        switch self {
        case .sha1:
            let derived: SymmetricKey
            do {
                derived = try KDF.Insecure.PBKDF2.deriveKey(
                    from: password, salt: salt, using: .insecureSHA1, outputByteCount: output.count,
                    unsafeUncheckedRounds: rounds)
            } catch {
                throw .keyDerivationFailed
            }
            derived.withUnsafeBytes { bytes in
                output.withUnsafeMutableBytes { $0.copyMemory(from: bytes) }
            }
        case .sha512:
            let status = output.withUnsafeMutableBufferPointer { buffer in
                coffer_pbkdf2_hmac_sha512(
                    password.baseAddress?.assumingMemoryBound(to: UInt8.self), password.count, salt, salt.count,
                    UInt32(clamping: rounds), buffer.baseAddress, buffer.count)
            }
            guard status == 1 else { throw .keyDerivationFailed }
        }
    }
}
