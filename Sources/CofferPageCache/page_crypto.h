// Page crypto with OpenSSL objects kept between calls. Used by provider.c.
//
// SQLCipher's OpenSSL provider builds its OpenSSL objects afresh for every page: it fetches the HMAC
// and cipher algorithms, allocates a context, schedules the key and frees it all again (OpenSSL 3's
// fetch and context set-up cost about as many instructions as authenticating and decrypting a 4 KiB
// page with SHA and AES instructions). A PageCrypto belongs to one SQLCipher provider context, which
// SQLite only uses under its connection's mutex, so it keeps one HMAC context per key and one cipher
// context per direction, and per page only resets them (a new IV, the HMAC's inner state copied back).
// The bytes it computes are the same: HMAC(key, in ‖ in2) and AES-CBC without padding.
#ifndef COFFER_PAGE_CRYPTO_H
#define COFFER_PAGE_CRYPTO_H

#include "page_table.h"

typedef struct PageCrypto PageCrypto;

/// A fresh state, NULL when out of memory.
PageCrypto *page_crypto_new(void);

/// Wipes and frees `crypto` (NULL is fine).
void page_crypto_free(PageCrypto *crypto);

/// Forgets the kept keys and contexts: the next call sets them up again.
void page_crypto_reset(PageCrypto *crypto);

/// HMAC with `digest` ("SHA1", "SHA256", "SHA512") of `in` then `in2` (may be NULL) under `key`, `mac_size`
/// bytes into `out`. 1 when computed, 0 when it could not be (the caller then asks SQLCipher's own provider).
int page_crypto_hmac(PageCrypto *crypto, const char *digest, const unsigned char *key, int key_size,
                     const unsigned char *in, int in_size, const unsigned char *in2, int in2_size, unsigned char *out,
                     int mac_size);

/// `cipher` (OpenSSL's name, e.g. "AES-256-CBC") without padding, encrypting when `encrypt` is 1: `in_size`
/// bytes from `in` to `out`. 1 when computed, 0 when it could not be (the caller then asks SQLCipher's own).
int page_crypto_cipher(PageCrypto *crypto, const char *cipher, int encrypt, const unsigned char *key, int key_size,
                       const unsigned char *iv, int iv_size, const unsigned char *in, int in_size, unsigned char *out);

#endif
