import CofferFormat
import Foundation

/// The key and page format under which the linked SQLCipher reads an encrypted file that Coffer attaches to
/// its connections without having written it: a live migration's source, written by SQLCipher 1, 2, 3 or 4
/// or by Coffer.
///
/// Found once, from the file's salt and page 1, by CofferFormat's profile detection (the loop `coffer info`,
/// `migrate` and repair use); every connection then attaches the file with the derived page key in raw form
/// (see `Connection.attach(_:as:fileKey:)`), so only the detection pays for key derivation.
package struct AttachedFileKey: Sendable {
    /// The page key: the passphrase stretched as the file's profile stretches it, or the raw key.
    let pageKey: SecureBytes
    /// The file's page size.
    let pageSize: Int
    /// Whether pages carry an HMAC (all but SQLCipher 1's).
    let usesHMAC: Bool
    /// SQLCipher 3's page format (SQLCipher 1–3, Coffer) or SQLCipher 4's.
    let format: LinkedSQLCipher.PageFormat
    /// What was found, for messages: "sqlcipher2 (PBKDF2-HMAC-SHA1 4000 rounds, HMAC-SHA1, 1024-byte pages,
    /// reserve 48)".
    package let profile: String

    /// Finds how the encrypted file at `path` was written, from `encryption` (a passphrase or raw key).
    ///
    /// - Throws: ``CofferError`` — `.wrongPassphrase` when no SQLCipher generation's settings authenticate a
    ///   page under the key, `.notADatabase` for a file the linked SQLCipher cannot read (SQLCipher 4's format
    ///   on SQLCipher 3.4.1, or settings no generation uses) or that holds no page, `.cantOpen` when it cannot
    ///   be read.
    package static func detect(path: String, encryption: Encryption) throws -> AttachedFileKey {
        if isPlaintext(path: path) == true {
            throw CofferError(
                code: .notADatabase, message: "\(path) is a plaintext SQLite file: declare it without a key")
        }
        let file: DatabaseFile
        do throws(DatabaseFileError) {
            file = try ProfileDetection.open(path: path, key: encryption)
        } catch {
            throw failure(error, path: path)
        }
        let settings = file.settings
        let profile = ProfileDetection.describe(file)
        guard let pageKey = file.decoder.keys?.encryptionKey else {
            throw CofferError(code: .notADatabase, message: "\(path) is not encrypted")
        }
        let hmacKey = settings.hmacKeyAlgorithm ?? settings.kdfAlgorithm
        let format: LinkedSQLCipher.PageFormat
        switch (settings.hmacAlgorithm, settings.reserveBytes, hmacKey) {
        case (.sha1, 48, .sha1), (.none, 16, _): format = .sqlcipher3
        case (.sha512, 80, .sha512): format = .sqlcipher4
        default:
            throw CofferError(
                code: .notADatabase, message: "\(path) is written with settings no SQLCipher generation uses: \(profile)")
        }
        if format == .sqlcipher4 && !LinkedSQLCipher.isVersion4 {
            throw CofferError(
                code: .notADatabase,
                message:
                    "\(path) is a SQLCipher 4 file (\(profile)), which the linked SQLCipher 3.4.1 cannot read: copy it with `coffer migrate` first, or build Coffer against SQLCipher 4"
            )
        }
        return AttachedFileKey(
            pageKey: pageKey, pageSize: file.pageSize, usesHMAC: settings.hmacAlgorithm != .none, format: format,
            profile: profile)
    }

    /// Whether the file at `path` starts as a plaintext SQLite file does; nil when it is empty or unreadable
    /// (SQLite then says what it is).
    package static func isPlaintext(path: String) -> Bool? {
        guard let head = try? FileSalt.read(path: path) else { return nil }
        return head == sqliteMagic
    }

    /// The PRAGMAs that make a connection's main database read the file (after its key).
    var pageFormatPragmas: [String] {
        LinkedSQLCipher.pageFormatPragmas(format: format, pageSize: pageSize, usesHMAC: usesHMAC)
    }

    private static func failure(_ error: DatabaseFileError, path: String) -> CofferError {
        switch error {
        case .wrongKey, .saltDamagedOrWrongKey:
            return CofferError(
                code: .wrongPassphrase,
                message:
                    "wrong passphrase or key for \(path): no page authenticates under Coffer's or SQLCipher 1–4's settings (\(error))"
            )
        case .cannotOpen:
            return CofferError(code: .cantOpen, message: "cannot read \(path)")
        default:
            return CofferError(code: .notADatabase, message: "\(path) holds no page Coffer recognises (\(error))")
        }
    }
}
