import Crypto
import _CryptoExtras

/// SQLCipher 3's key derivation, for the raw C baseline's second connection.
enum DerivedKey {
    static func pbkdf2SHA1(passphrase: String, salt: [UInt8], rounds: Int) throws -> [UInt8] {
        let key = try KDF.Insecure.PBKDF2.deriveKey(
            from: Array(passphrase.utf8), salt: salt, using: .insecureSHA1, outputByteCount: 32, unsafeUncheckedRounds: rounds)
        return key.withUnsafeBytes { Array($0) }
    }
}
