// PageDecoder — authenticates and decrypts one SQLCipher page.
//
// Layout of an encrypted page of size P with reserve R (checked against SQLCipher 3.4.1):
//
//   [0, P−R)          AES-256-CBC ciphertext, no padding. On page 1 the first 16 bytes are instead the
//                     salt, in clear, and the ciphertext is [16, P−R).
//   [P−R, P−R+16)     the IV, fresh random on every write.
//   [P−R+16, +H)      HMAC(ciphertext ‖ IV ‖ page number as 4-byte little-endian), H = 20 (SHA-1) or 64.
//   rest              random padding, not authenticated.
//
// Keys: encryption key = PBKDF2(kdf, passphrase, salt, rounds, 32) or a raw 32-byte key;
// HMAC key = PBKDF2(kdf, encryption key, salt XOR 0x3a, 2, 32).
//
// Rejections and why:
// - `.badHMAC`: the stored code does not match. The page (or its IV, or the salt) was altered, or the key is
//   wrong. A page that fails is never decrypted: garbled plaintext must not reach the B-tree parser as if it
//   were trusted.
// - `.wrongSize`: the buffer is not one page long (a truncated read at the end of the file).
// - `.zeroed`: every byte of an encrypted page is zero. SQLCipher passes such a page through without an HMAC
//   check, but no page it writes is all zero (even a freed page is encrypted zeros), so it is damage like
//   any other. A plaintext page is returned as it is: there an all-zero page can be valid (a free page, the
//   last overflow page of a run of zeros), so its role decides (Salvager+Orphans, DecodedInspection).

import Crypto
import Foundation
import _CryptoExtras

/// Why a page could not be read.
public enum PageFailure: Error, Sendable, Equatable {
    /// The page's HMAC does not verify: it was damaged or the key is wrong.
    case badHMAC
    /// The page is shorter than the page size (truncated file) or beyond the end of the file.
    case wrongSize
    /// The page number is 0 or past the last page.
    case outOfRange
    /// The operating system refused the read.
    case ioError
    /// Decryption failed even though authentication passed (should not happen; reported, not trusted).
    case decryptFailed
    /// Every byte of the page is zero: zero-filled damage (see the rules above).
    case zeroed
}

/// Authenticates and decrypts pages of one page size with one set of keys.
///
/// ```swift
/// let decoder = PageDecoder(settings: .sqlcipher3.with(pageSize: 4096), keys: keys)
/// switch decoder.decode(raw, pageNumber: 2) { case .success(let page): … case .failure(.badHMAC): … }
/// ```
public struct PageDecoder: Sendable {
    /// The codec parameters; `settings.pageSize` is the page size in use.
    public let settings: CipherSettings
    /// The page size in bytes.
    public let pageSize: Int
    /// The keys, or `nil` for plaintext.
    public let keys: DerivedKeys?

    /// The usable size U = page size − reserve, which every B-tree formula uses.
    public var usableSize: Int { pageSize - settings.reserveBytes }

    /// A decoder for pages of `pageSize` bytes (falls back to `settings.pageSize`, then 4096).
    public init(settings: CipherSettings, keys: DerivedKeys?, pageSize: Int? = nil) {
        self.pageSize = pageSize ?? settings.pageSize ?? 4096
        self.settings = settings.with(pageSize: self.pageSize)
        self.keys = keys
    }

    /// Whether the page's HMAC verifies (always `false` for a profile without HMAC or for plaintext).
    public func authenticates(_ raw: [UInt8], pageNumber: UInt32) -> Bool {
        raw.withUnsafeBytes { authenticates($0, pageNumber: pageNumber) }
    }

    /// Whether the page's HMAC verifies, over raw bytes (always `false` for a profile without HMAC or for
    /// plaintext).
    public func authenticates(_ raw: UnsafeRawBufferPointer, pageNumber: UInt32) -> Bool {
        guard settings.isEncrypted, settings.hmacAlgorithm != .none, let keys, raw.count == pageSize else {
            return false
        }
        let reserve = settings.reserveBytes
        let hmacLength = settings.hmacAlgorithm.length
        let start = pageNumber == 1 ? FileSalt.size : 0
        let ivEnd = pageSize - reserve + 16
        guard reserve >= 16 + hmacLength, ivEnd > start, ivEnd + hmacLength <= raw.count else { return false }
        var number = pageNumber.littleEndian
        // Raw buffers, not slices: swift-crypto's generic DataProtocol path per slice cost more than the hash.
        let body = UnsafeRawBufferPointer(rebasing: raw[start..<ivEnd])
        let stored = UnsafeRawBufferPointer(rebasing: raw[ivEnd..<(ivEnd + hmacLength)])
        return withUnsafeBytes(of: &number) { numberBytes in
            switch settings.hmacAlgorithm {
            case .none:
                return false
            case .sha1:
                var hmac = HMAC<Insecure.SHA1>(key: keys.hmacKey)
                hmac.update(data: body)
                hmac.update(data: numberBytes)
                return hmac.finalize().withUnsafeBytes { $0.elementsEqual(stored) }
            case .sha512:
                var hmac = HMAC<SHA512>(key: keys.hmacKey)
                hmac.update(data: body)
                hmac.update(data: numberBytes)
                return hmac.finalize().withUnsafeBytes { $0.elementsEqual(stored) }
            }
        }
    }

    /// Whether SQLCipher itself reads the page without error: its HMAC verifies, the profile has no HMAC,
    /// or the page is all zeros (read as zeros, unchecked). Backup and restore use this rule to judge pages
    /// the library will be given; salvage uses the stricter ``decode(_:pageNumber:)``.
    public func libraryAccepts(_ raw: UnsafeRawBufferPointer, pageNumber: UInt32) -> Bool {
        guard raw.count == pageSize else { return false }
        guard settings.isEncrypted, settings.hmacAlgorithm != .none else { return true }
        return authenticates(raw, pageNumber: pageNumber) || raw.isAllZeroBytes
    }

    /// The plaintext byte at `offset` of a page the library accepts, decrypting only its 16-byte CBC
    /// block (plaintext block i is D(ciphertext block i) XOR ciphertext block i−1, the IV before the
    /// first): what a walk needs to learn a page's type without decrypting it whole. Nil when the page is
    /// not accepted or `offset` is outside the ciphertext.
    public func plaintextByte(_ raw: [UInt8], pageNumber: UInt32, at offset: Int) -> UInt8? {
        guard raw.withUnsafeBytes({ libraryAccepts($0, pageNumber: pageNumber) }) else { return nil }
        guard settings.isEncrypted, let keys else { return offset < raw.count ? raw[offset] : nil }
        let start = pageNumber == 1 ? FileSalt.size : 0
        let end = pageSize - settings.reserveBytes
        guard offset >= start, offset < end, end + 16 <= raw.count else { return nil }
        let blockStart = start + (offset - start) / 16 * 16
        let ivStart = blockStart == start ? end : blockStart - 16
        guard
            let block = AESCBCPageCipher.decrypt(
                raw[blockStart..<(blockStart + 16)], key: keys.encryptionKey, iv: raw[ivStart..<(ivStart + 16)])
        else { return nil }
        return block[offset - blockStart]
    }

    /// Authenticates then decrypts `raw` (one page as stored), returning the plaintext page of `pageSize`
    /// bytes. Page 1 gets `"SQLite format 3\0"` back in bytes 0–15. The reserve area is returned as stored.
    public func decode(_ raw: [UInt8], pageNumber: UInt32) -> Result<[UInt8], PageFailure> {
        guard raw.count == pageSize else { return .failure(.wrongSize) }
        guard settings.isEncrypted else { return .success(raw) }
        if raw.first == 0, ByteView(raw).isAllZero { return .failure(.zeroed) }
        guard let keys else { return .failure(.decryptFailed) }
        if settings.hmacAlgorithm != .none, !authenticates(raw, pageNumber: pageNumber) {
            return .failure(.badHMAC)
        }
        return decrypt(raw, pageNumber: pageNumber, key: keys.encryptionKey)
    }

    /// Decrypts in place in a copy of `raw`: the ciphertext range becomes plaintext, the reserve area stays
    /// as stored, and page 1 gets the SQLite magic where its salt was.
    private func decrypt(_ raw: [UInt8], pageNumber: UInt32, key: SecureBytes) -> Result<[UInt8], PageFailure> {
        let reserve = settings.reserveBytes
        let start = pageNumber == 1 ? 16 : 0
        let cipherEnd = pageSize - reserve
        guard cipherEnd > start, (cipherEnd - start) % 16 == 0, cipherEnd + 16 <= raw.count else {
            return .failure(.decryptFailed)
        }
        var page = raw
        let ok = raw.withUnsafeBytes { input in
            page.withUnsafeMutableBytes { output in
                AESCBCPageCipher.decrypt(
                    UnsafeRawBufferPointer(rebasing: input[start..<cipherEnd]), key: key,
                    iv: UnsafeRawBufferPointer(rebasing: input[cipherEnd..<(cipherEnd + 16)]),
                    into: UnsafeMutableRawBufferPointer(rebasing: output[start..<cipherEnd]))
            }
        }
        guard ok else { return .failure(.decryptFailed) }
        if pageNumber == 1 { page.replaceSubrange(0..<16, with: sqliteMagic) }
        return .success(page)
    }
}

/// The 16 bytes every plaintext SQLite file starts with.
package let sqliteMagic: [UInt8] = Array("SQLite format 3".utf8) + [0]

extension Result {
    /// Whether the result is a success.
    package var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }

    /// The value, or nil on failure.
    package var success: Success? {
        if case .success(let value) = self { return value }
        return nil
    }
}
