import COpenSSL

/// AES-256-CBC decryption of a whole page in one call, through OpenSSL's EVP interface (no padding).
///
/// SQLCipher encrypts each page as one CBC message. swift-crypto's `AES._CBC` decrypts block by block
/// and expands the key schedule again for every 16-byte block, which capped repair at about 12 MB/s.
/// OpenSSL's libcrypto — the library SQLCipher itself runs on — decrypts the page in one call with AES-NI.
enum AESCBCPageCipher {
    /// Decrypts `ciphertext` (a multiple of 16 bytes) with a 32-byte `key` and a 16-byte `iv`; nil when the
    /// sizes are wrong or OpenSSL fails.
    static func decrypt(_ ciphertext: ArraySlice<UInt8>, key: [UInt8], iv: ArraySlice<UInt8>) -> [UInt8]? {
        guard key.count == 32, iv.count == 16, ciphertext.count % 16 == 0, ciphertext.count <= Int(Int32.max),
            let context = EVP_CIPHER_CTX_new()
        else { return nil }
        defer { EVP_CIPHER_CTX_free(context) }
        var output = [UInt8](repeating: 0, count: ciphertext.count)
        var written: Int32 = 0
        let ok = key.withUnsafeBufferPointer { keyBytes in
            iv.withUnsafeBufferPointer { ivBytes in
                ciphertext.withUnsafeBufferPointer { input in
                    output.withUnsafeMutableBufferPointer { out in
                        EVP_DecryptInit_ex(context, EVP_aes_256_cbc(), nil, keyBytes.baseAddress, ivBytes.baseAddress) == 1
                            && EVP_CIPHER_CTX_set_padding(context, 0) == 1
                            && EVP_DecryptUpdate(context, out.baseAddress, &written, input.baseAddress, Int32(input.count)) == 1
                    }
                }
            }
        }
        guard ok, Int(written) == ciphertext.count else { return nil }
        return output
    }
}
