import Crypto
import Foundation
import _CryptoExtras

/// Finds how an existing encrypted file was written — its key derivation and page size — from the key
/// alone, before SQLite is asked to read it.
///
/// Only the salt (bytes 0–15) is in clear, so each candidate is tried against page 1's HMAC (see
/// ``PageCodec``): derivations in order (the configured one, then SQLCipher 3's PBKDF2-HMAC-SHA1 64,000,
/// then Coffer's default PBKDF2-HMAC-SHA512 256,000),
/// and for each derived key the page sizes (the configured one, 1024, 4096, then every other power of two
/// from 512 to 65536 that divides the file size). A page-size try costs one 2-round PBKDF2 and one HMAC
/// over a page; only a derivation costs real time, and the one that matched is the one connections reuse.
///
/// When nothing authenticates — a wrong key, or a page 1 too damaged to check — the configured settings
/// are returned unproven with the list of what was tried: SQLite's proving read then decides, and a
/// wrong-passphrase error names the settings. A SQLCipher 4 file (HMAC-SHA512, reserve 80), which the
/// linked SQLCipher 3.4.1 cannot read, is recognised when its derivation was among those tried, and
/// refused with a ``CofferError/notADatabase`` that says to migrate it.
enum CipherDetection {
    /// The key for the existing file at `path` whose salt is `salt`, from the encryption's bytes.
    static func key(
        encryptionBytes: SecureBytes, isRawKey: Bool, path: String, salt: [UInt8], options: CipherOptions
    ) throws -> DatabaseKey {
        let head = try readHead(path: path)
        let detects = options.detectsExistingSettings && options.usesHMAC
        let pageSizes = detects ? candidatePageSizes(configured: options.pageSize, fileSize: head.fileSize) : [options.pageSize]
        var derivations: [KeyDerivation?] = isRawKey ? [nil] : [options.keyDerivation]
        if detects && !isRawKey {
            for known in [KeyDerivation.sqlcipher3, .coffer] where !derivations.contains(known) { derivations.append(known) }
        }
        var tried: [String] = []
        var fallback: (key: SecureBytes, derivation: KeyDerivation?)?
        for derivation in derivations {
            let key = try derivation.map { try $0.derive(passphrase: encryptionBytes, salt: salt) } ?? encryptionBytes
            if fallback == nil { fallback = (key, derivation) }
            guard options.usesHMAC else { break }
            if let pageSize = try authenticatingPageSize(head: head.bytes, key: key, salt: salt, candidates: pageSizes) {
                return DatabaseKey(
                    keySpec: SecureBytes.rawKeySpec(key: key, salt: nil), key: key, salt: salt,
                    encryptionBytes: encryptionBytes, isRawKey: isRawKey, derivation: derivation, pageSize: pageSize,
                    unprovenAfterTrying: nil)
            }
            tried.append(derivation?.description ?? "the raw key")
            if derivation == .coffer || isRawKey, isSQLCipher4(head: head.bytes, key: key, salt: salt) {
                throw CofferError(
                    code: .notADatabase,
                    message:
                        "\(path) is a SQLCipher 4 file (its page 1 authenticates with HMAC-SHA512 and reserve 80), which the linked SQLCipher 3.4.1 cannot read: copy it into Coffer's format with `coffer migrate`"
                )
            }
        }
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

    /// The page sizes to try, in order: `configured`, 1024 (SQLCipher's default), 4096 (Coffer's), then
    /// the other powers of two from 512 to 65536 that divide `fileSize` (a main file is whole pages).
    static func candidatePageSizes(configured: Int, fileSize: Int) -> [Int] {
        var sizes = [configured]
        for size in [1024, 4096] + (9...16).map({ 1 << $0 }) where !sizes.contains(size) {
            if size == 1024 || size == 4096 || fileSize % size == 0 { sizes.append(size) }
        }
        return sizes.filter { $0 <= fileSize || $0 == configured }
    }

    /// The first of `candidates` at which page 1 (the start of `head`) authenticates under `key` with
    /// SQLCipher 3's page format.
    private static func authenticatingPageSize(head: [UInt8], key: SecureBytes, salt: [UInt8], candidates: [Int]) throws
        -> Int?
    {
        for pageSize in candidates where pageSize <= head.count {
            let page = head[0..<pageSize]
            // An all-zero page "verifies" in PageCodec (SQLite reads it as empty); page 1 never is one.
            if page.allSatisfy({ $0 == 0 }) { continue }
            let codec = try PageCodec(key: key, salt: salt, pageSize: pageSize)
            if page.withUnsafeBytes({ codec.verify($0, pageNumber: 1) }) { return pageSize }
        }
        return nil
    }

    /// Whether page 1 authenticates as SQLCipher 4 writes it by default: HMAC-SHA512 (key
    /// PBKDF2-HMAC-SHA512(key, salt XOR 0x3a, 2 rounds)) over ciphertext ‖ IV ‖ page number (little-endian),
    /// stored in the last 64 of 80 reserved bytes, at any page size the head holds.
    private static func isSQLCipher4(head: [UInt8], key: SecureBytes, salt: [UInt8]) -> Bool {
        let mask = salt.map { $0 ^ 0x3a }
        guard
            let hmacKey = try? key.withUnsafeBytes({
                try KDF.Insecure.PBKDF2.deriveKey(
                    from: $0, salt: mask, using: .sha512, outputByteCount: DatabaseKey.keySize, unsafeUncheckedRounds: 2)
            })
        else { return false }
        for pageSize in (9...16).map({ 1 << $0 }) where pageSize <= head.count {
            var mac = HMAC<SHA512>(key: hmacKey)
            mac.update(data: head[DatabaseKey.saltSize..<(pageSize - 64)])
            withUnsafeBytes(of: UInt32(1).littleEndian) { mac.update(data: $0) }
            if mac.finalize().withUnsafeBytes({ $0.elementsEqual(head[(pageSize - 64)..<pageSize]) }) { return true }
        }
        return false
    }

    /// Up to the first 64 KiB of the file (page 1 at the largest page size) and the file's size.
    private static func readHead(path: String) throws -> (bytes: [UInt8], fileSize: Int) {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CofferError(code: .cantOpen, message: "cannot read \(path)")
        }
        defer { try? handle.close() }
        let size = Int((try? handle.seekToEnd()) ?? 0)
        try? handle.seek(toOffset: 0)
        let bytes = (try? handle.read(upToCount: 65536)) ?? Data()
        return (Array(bytes), size)
    }
}
