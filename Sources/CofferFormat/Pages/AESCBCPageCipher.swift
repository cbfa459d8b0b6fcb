import COpenSSL

/// AES-256-CBC decryption of a whole page in one call, through OpenSSL's EVP interface (no padding).
///
/// SQLCipher encrypts each page as one CBC message. swift-crypto's `AES._CBC` decrypts block by block
/// and expands the key schedule again for every 16-byte block, which capped repair at about 12 MB/s.
/// OpenSSL's libcrypto — the library SQLCipher itself runs on — decrypts the page in one call with AES-NI.
enum AESCBCPageCipher {
    /// AES-256-CBC fetched from OpenSSL's default provider once: OpenSSL 3 otherwise fetches it again at
    /// every `EVP_DecryptInit_ex` with the legacy `EVP_aes_256_cbc()`. Immutable and thread-safe once
    /// fetched (OpenSSL documents fetched algorithms as shareable); never freed.
    nonisolated(unsafe) private static let cipher: OpaquePointer? = EVP_CIPHER_fetch(nil, "AES-256-CBC", nil)

    /// Decrypts `ciphertext` (a multiple of 16 bytes) with a 32-byte `key` and a 16-byte `iv`; nil when the
    /// sizes are wrong or OpenSSL fails.
    static func decrypt(_ ciphertext: ArraySlice<UInt8>, key: SecureBytes, iv: ArraySlice<UInt8>) -> [UInt8]? {
        var output = [UInt8](repeating: 0, count: ciphertext.count)
        let ok = ciphertext.withUnsafeBytes { input in
            iv.withUnsafeBytes { ivBytes in
                output.withUnsafeMutableBytes { decrypt(input, key: key, iv: ivBytes, into: $0) }
            }
        }
        return ok ? output : nil
    }

    /// Decrypts `ciphertext` into `output` (the same length); false when the sizes are wrong or OpenSSL
    /// fails.
    static func decrypt(
        _ ciphertext: UnsafeRawBufferPointer, key: SecureBytes, iv: UnsafeRawBufferPointer,
        into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        guard key.count == 32, iv.count == 16, ciphertext.count % 16 == 0, ciphertext.count <= Int(Int32.max),
            output.count == ciphertext.count, let context = EVP_CIPHER_CTX_new()
        else { return false }
        defer { EVP_CIPHER_CTX_free(context) }
        if ciphertext.isEmpty { return true }
        guard let input = ciphertext.baseAddress?.assumingMemoryBound(to: UInt8.self),
            let out = output.baseAddress?.assumingMemoryBound(to: UInt8.self),
            let ivBase = iv.baseAddress?.assumingMemoryBound(to: UInt8.self)
        else { return false }
        var written: Int32 = 0
        let ok = key.withUnsafeBytes { keyBytes in
            EVP_DecryptInit_ex(
                context, cipher ?? EVP_aes_256_cbc(), nil, keyBytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
                ivBase) == 1
                && EVP_CIPHER_CTX_set_padding(context, 0) == 1
                && EVP_DecryptUpdate(context, out, &written, input, Int32(ciphertext.count)) == 1
        }
        return ok && Int(written) == ciphertext.count
    }
}
