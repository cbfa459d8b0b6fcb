// OpenSSL's libcrypto, which SQLCipher itself runs on: the repair engine uses its EVP AES-256-CBC to
// decrypt whole pages in one call (swift-crypto's AES._CBC expands the key again for every 16-byte block),
// and key derivation runs on its SHA-512.

// SHA512_Init/Update/Final are deprecated in OpenSSL 3 in favour of EVP, but EVP is what makes
// PKCS5_PBKDF2_HMAC slow: below.
#ifndef OPENSSL_SUPPRESS_DEPRECATED
#define OPENSSL_SUPPRESS_DEPRECATED 1
#endif
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <string.h>

/// PBKDF2-HMAC-SHA512 (RFC 8018) into `output`: what `PKCS5_PBKDF2_HMAC(…, EVP_sha512(), …)` gives, with the
/// HMAC's inner and outer pads hashed once rather than once per round. OpenSSL 3's PKCS5_PBKDF2_HMAC runs
/// each round's two HMAC steps through its provider layer (an HMAC context initialised, updated and
/// finalised per round), which on the 2-core test machine takes 175–195 ms for 256,000 rounds where the
/// 512,000 SHA-512 compressions themselves take 110–115 ms; this loop costs what the compressions cost.
/// `rounds` at least 1. Returns 1 (OpenSSL's success) always; the signature mirrors PKCS5_PBKDF2_HMAC's.
static inline int coffer_pbkdf2_hmac_sha512(
    const unsigned char *password, size_t password_length, const unsigned char *salt, size_t salt_length,
    unsigned rounds, unsigned char *output, size_t output_length) {
    unsigned char key[SHA512_CBLOCK];
    unsigned char pad[SHA512_CBLOCK];
    memset(key, 0, sizeof key);
    if (password_length > SHA512_CBLOCK) {
        SHA512(password, password_length, key);  // HMAC's rule for a key longer than a block
    } else if (password_length > 0) {
        memcpy(key, password, password_length);
    }
    SHA512_CTX inner, outer, context;
    for (int i = 0; i < SHA512_CBLOCK; i++) pad[i] = key[i] ^ 0x36;
    SHA512_Init(&inner);
    SHA512_Update(&inner, pad, sizeof pad);
    for (int i = 0; i < SHA512_CBLOCK; i++) pad[i] = key[i] ^ 0x5c;
    SHA512_Init(&outer);
    SHA512_Update(&outer, pad, sizeof pad);
    unsigned char u[SHA512_DIGEST_LENGTH], t[SHA512_DIGEST_LENGTH];
    for (unsigned block = 1; output_length > 0; block++) {
        const unsigned char index[4] = {
            (unsigned char)(block >> 24), (unsigned char)(block >> 16), (unsigned char)(block >> 8),
            (unsigned char)block};
        context = inner;  // U1 = HMAC(password, salt || INT(block))
        SHA512_Update(&context, salt, salt_length);
        SHA512_Update(&context, index, sizeof index);
        SHA512_Final(u, &context);
        context = outer;
        SHA512_Update(&context, u, sizeof u);
        SHA512_Final(u, &context);
        memcpy(t, u, sizeof t);
        for (unsigned round = 1; round < rounds; round++) {  // Uj = HMAC(password, Uj-1); T ^= Uj
            context = inner;
            SHA512_Update(&context, u, sizeof u);
            SHA512_Final(u, &context);
            context = outer;
            SHA512_Update(&context, u, sizeof u);
            SHA512_Final(u, &context);
            for (int i = 0; i < SHA512_DIGEST_LENGTH; i++) t[i] ^= u[i];
        }
        size_t count = output_length < sizeof t ? output_length : sizeof t;
        memcpy(output, t, count);
        output += count;
        output_length -= count;
    }
    OPENSSL_cleanse(key, sizeof key);
    OPENSSL_cleanse(pad, sizeof pad);
    OPENSSL_cleanse(u, sizeof u);
    OPENSSL_cleanse(t, sizeof t);
    OPENSSL_cleanse(&inner, sizeof inner);
    OPENSSL_cleanse(&outer, sizeof outer);
    OPENSSL_cleanse(&context, sizeof context);
    return 1;
}
