import CofferFormat
import Foundation

/// Finds how an existing encrypted file was written — its key derivation and page size — from the key
/// alone, before SQLite is asked to read it.
///
/// Only the salt (bytes 0–15) is in clear, so each candidate is tried against page 1's HMAC (CofferFormat's
/// `PageDecoder`, in the loop `coffer info` and repair use too: `ProfileDetection.firstMatch`): derivations in order (the configured one, then SQLCipher 3's PBKDF2-HMAC-SHA1 64,000,
/// then Coffer's default PBKDF2-HMAC-SHA512 256,000),
/// and for each derived key the page sizes (the configured one, then CofferFormat's
/// `DatabaseFile.candidatePageSizes`: the powers of two from 512 to 65536 that fit, those dividing the file
/// size first). A page-size try costs one 2-round PBKDF2 and one HMAC
/// over a page; only a derivation costs real time, and the one that matched is the one connections reuse.
///
/// When nothing authenticates — a wrong key, or a page 1 too damaged to check — the configured settings
/// are returned unproven with the list of what was tried: SQLite's proving read then decides, and a
/// wrong-passphrase error names the settings. A SQLCipher 4 file (HMAC-SHA512, reserve 80, its default
/// PBKDF2-HMAC-SHA512 256,000 or a raw key) is recognised when its derivation was among those tried: built
/// against SQLCipher 4, Coffer opens it in its own format (``LinkedSQLCipher/PageFormat/sqlcipher4``); against
/// SQLCipher 3.4.1, which cannot read it, it is refused with a ``CofferError/notADatabase`` that says to
/// migrate it.
enum CipherDetection {
    /// The key for the existing file at `path` whose salt is `salt`, from the encryption's bytes.
    static func key(
        encryptionBytes: SecureBytes, isRawKey: Bool, path: String, salt: [UInt8], options: CipherOptions
    ) throws -> DatabaseKey {
        let head = try readHead(path: path)
        let detects = options.detectsExistingSettings && options.usesHMAC
        let pageSizes =
            detects
            ? DatabaseFile.candidatePageSizes(fileSize: UInt64(head.fileSize), first: options.pageSize) : [options.pageSize]
        var derivations: [KeyDerivation?] = isRawKey ? [nil] : [options.keyDerivation]
        if detects && !isRawKey {
            for known in [KeyDerivation.sqlcipher3, .coffer] where !derivations.contains(known) { derivations.append(known) }
        }
        var tried: [String] = []
        var fallback: (key: SecureBytes, derivation: KeyDerivation?)?
        // One candidate per derivation, through CofferFormat's one detection loop.
        let candidates = derivations.map { options.settings(derivation: $0) }
        let found = try ProfileDetection.firstMatch(candidates: candidates) {
            candidate throws(any Error) -> (key: SecureBytes, derivation: KeyDerivation?) in
            let derivation = isRawKey ? nil : KeyDerivation(settings: candidate)
            return (try derivation.map { try $0.derive(passphrase: encryptionBytes, salt: salt) } ?? encryptionBytes, derivation)
        } attempt: { _, derived throws(any Error) -> DatabaseKey? in
            let (key, derivation) = derived
            if fallback == nil { fallback = derived }
            guard options.usesHMAC else { return nil }
            if let pageSize = try authenticatingPageSize(head: head.bytes, key: key, salt: salt, candidates: pageSizes) {
                return DatabaseKey(
                    keySpec: SecureBytes.rawKeySpec(key: key, salt: nil), key: key, salt: salt,
                    encryptionBytes: encryptionBytes, isRawKey: isRawKey, derivation: derivation, pageSize: pageSize,
                    unprovenAfterTrying: nil)
            }
            tried.append(derivation?.description ?? "the raw key")
            if derivation == .coffer || isRawKey,
                let pageSize = sqlcipher4PageSize(head: head.bytes, key: key, salt: salt)
            {
                // SQLCipher 4 reads its own format: open it as it is (see LinkedSQLCipher).
                if LinkedSQLCipher.isVersion4 {
                    return DatabaseKey(
                        keySpec: SecureBytes.rawKeySpec(key: key, salt: nil), key: key, salt: salt,
                        encryptionBytes: encryptionBytes, isRawKey: isRawKey, derivation: derivation, pageSize: pageSize,
                        unprovenAfterTrying: nil, pageFormat: .sqlcipher4)
                }
                throw CofferError(
                    code: .notADatabase,
                    message:
                        "\(path) is a SQLCipher 4 file (its page 1 authenticates with HMAC-SHA512 and reserve 80), which the linked SQLCipher 3.4.1 cannot read: copy it into Coffer's format with `coffer migrate`"
                )
            }
            return nil
        }
        if let found { return found }
        guard let fallback else {
            throw CofferError(code: .invalidConfiguration, message: "no key derivation to try")
        }
        let sizes =
            pageSizes.count == 1
            ? "page size \(pageSizes[0])" : "page sizes \(pageSizes.map(String.init).joined(separator: ", "))"
        return DatabaseKey(
            keySpec: SecureBytes.rawKeySpec(key: fallback.key, salt: nil), key: fallback.key, salt: salt,
            encryptionBytes: encryptionBytes, isRawKey: isRawKey, derivation: fallback.derivation, pageSize: options.pageSize,
            unprovenAfterTrying: tried.isEmpty ? nil : "tried \(tried.joined(separator: " and ")) at \(sizes)")
    }

    /// The first of `candidates` at which page 1 (the start of `head`) authenticates under `key` with
    /// SQLCipher 3's page format (CofferFormat's one page-size loop).
    private static func authenticatingPageSize(head: [UInt8], key: SecureBytes, salt: [UInt8], candidates: [Int]) throws
        -> Int?
    {
        let settings = DatabaseKey.pageSettings(usesHMAC: true)
        let keys = try DerivedKeys(rawKey: key, salt: salt, settings: settings)
        return DatabaseFile.pageOneSize(head: head, settings: settings, keys: keys, candidates: candidates)
    }

    /// The page size at which page 1 authenticates as SQLCipher 4 writes it by default (HMAC-SHA512 in the last
    /// 64 of 80 reserved bytes), at any page size the head holds; nil when it does not.
    private static func sqlcipher4PageSize(head: [UInt8], key: SecureBytes, salt: [UInt8]) -> Int? {
        guard let keys = try? DerivedKeys(rawKey: key, salt: salt, settings: .sqlcipher4) else { return nil }
        return DatabaseFile.pageOneSize(
            head: head, settings: .sqlcipher4, keys: keys, candidates: (9...16).map { 1 << $0 })
    }

    /// Up to the first 64 KiB of the file (page 1 at the largest page size) and the file's size.
    private static func readHead(path: String) throws -> (bytes: [UInt8], fileSize: Int) {
        // Through the descriptor table: another `Database` in this process may hold locks on this file.
        guard let file = ReadOnlyFile(path: path) else {
            throw CofferError(code: .cantOpen, message: "cannot read \(path)")
        }
        return (file.readUpTo(65536, at: 0) ?? [], Int(file.size))
    }
}
