import Crypto
import Foundation
import _CryptoExtras

/// Reads SQLCipher 3 pages without SQLite: checks each page's HMAC and decrypts it.
///
/// Page layout (page size P, reserve 48): `[0, P-48)` AES-256-CBC ciphertext (on page 1 the first 16
/// bytes are the file's salt in clear and the ciphertext is `[16, P-48)`), the IV at `[P-48, P-32)`,
/// HMAC-SHA1 at `[P-32, P-12)` over ciphertext ‖ IV ‖ page number (4 bytes little-endian), then 12
/// unauthenticated bytes. The HMAC key is PBKDF2-HMAC-SHA1(page key, salt XOR 0x3a, 2 rounds, 32 bytes).
/// An all-zero page reads as zeros and carries no HMAC.
struct PageCodec {
    /// The page size in bytes.
    let pageSize: Int
    /// Bytes at the end of every page that hold IV and HMAC (with HMAC).
    static let reserve = 48
    /// Whether pages carry an HMAC; without one (`cipher_use_hmac = OFF`) the reserve is the 16-byte IV
    /// alone and nothing can be authenticated.
    let usesHMAC: Bool
    /// The reserve of this codec's pages.
    var reserve: Int { usesHMAC ? Self.reserve : 16 }
    private let pageKey: SymmetricKey
    private let hmacKey: SymmetricKey

    init(key: SecureBytes, salt: [UInt8], pageSize: Int, usesHMAC: Bool = true) throws {
        self.pageSize = pageSize
        self.usesHMAC = usesHMAC
        let keyBytes = key.withUnsafeBytes { Array($0) }
        pageKey = SymmetricKey(data: keyBytes)
        let mask = salt.map { $0 ^ 0x3a }
        let derived = try KDF.Insecure.PBKDF2.deriveKey(
            from: keyBytes, salt: mask, using: .insecureSHA1, outputByteCount: 32, unsafeUncheckedRounds: 2)
        hmacKey = derived
    }

    /// True when `page` (exactly `pageSize` bytes) authenticates as page number `pageNumber`.
    func verify(_ page: UnsafeRawBufferPointer, pageNumber: UInt32) -> Bool {
        guard page.count == pageSize else { return false }
        guard usesHMAC else { return true }
        let start = pageNumber == 1 ? DatabaseKey.saltSize : 0
        var mac = HMAC<Insecure.SHA1>(key: hmacKey)
        mac.update(data: UnsafeRawBufferPointer(rebasing: page[start..<(pageSize - 32)]))
        withUnsafeBytes(of: pageNumber.littleEndian) { mac.update(data: $0) }
        let expected = mac.finalize()
        let stored = UnsafeRawBufferPointer(rebasing: page[(pageSize - 32)..<(pageSize - 12)])
        if expected.withUnsafeBytes({ computed in computed.elementsEqual(stored) }) { return true }
        return page.allSatisfy { $0 == 0 }
    }

    /// The plaintext byte at `offset` of an authenticated page, decrypting only its CBC block (plaintext
    /// block i is D(ciphertext block i) XOR ciphertext block i−1, the IV before the first).
    func decryptByte(_ page: [UInt8], pageNumber: UInt32, at offset: Int) -> UInt8? {
        guard page.count == pageSize, page.withUnsafeBytes({ verify($0, pageNumber: pageNumber) }) else { return nil }
        let start = pageNumber == 1 ? DatabaseKey.saltSize : 0
        let end = pageSize - reserve
        guard offset >= start, offset < end else { return nil }
        let block = (offset - start) / 16
        let blockStart = start + block * 16
        let prior = block == 0 ? Array(page[end..<(end + 16)]) : Array(page[(blockStart - 16)..<blockStart])
        guard
            let plain = try? AES._CBC.decrypt(
                page[blockStart..<(blockStart + 16)], using: pageKey, iv: AES._CBC.IV(ivBytes: prior), noPadding: true)
        else { return nil }
        return Array(plain)[offset - blockStart]
    }

    /// Checks and decrypts a page. Page 1 gets SQLite's magic string back in its first 16 bytes; the
    /// result is `pageSize - 48` bytes (the usable size). Nil when the HMAC fails.
    func decrypt(_ page: [UInt8], pageNumber: UInt32) -> [UInt8]? {
        guard page.count == pageSize, page.withUnsafeBytes({ verify($0, pageNumber: pageNumber) }) else { return nil }
        let start = pageNumber == 1 ? DatabaseKey.saltSize : 0
        let end = pageSize - reserve
        let iv = Array(page[end..<(end + 16)])
        guard
            let plain = try? AES._CBC.decrypt(
                page[start..<end], using: pageKey, iv: AES._CBC.IV(ivBytes: iv), noPadding: true)
        else { return nil }
        return pageNumber == 1 ? Array("SQLite format 3\0".utf8) + Array(plain) : Array(plain)
    }

    /// A short checksum: the first 8 bytes of SHA-256, hex.
    static func checksum(_ bytes: [UInt8]) -> String {
        let digest = SHA256.hash(data: bytes)
        return digest.prefix(8).map { String(format: "%02x", $0) }.joined()
    }
}

extension DatabaseKey {
    /// The codec for a database file: the salt comes from `salt` when known, else the file's first bytes.
    func pageCodec(path: String, pageSize: Int, usesHMAC: Bool) throws -> PageCodec {
        let salt = try self.salt ?? DatabaseKey.readSalt(path: path)
        guard let salt else { throw CofferError(code: .fileNotFound, message: "no database at \(path)") }
        return try PageCodec(key: key, salt: salt, pageSize: pageSize, usesHMAC: usesHMAC)
    }
}
