// Page crypto with OpenSSL objects kept between calls (see page_crypto.h).
#include "page_crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <stdlib.h>
#include <string.h>

#define NAME_SIZE 32

// A cipher context set up for one direction, with the key and algorithm it was set up with.
typedef struct CipherSlot {
    EVP_CIPHER_CTX *context;
    unsigned char key[PAGE_MAX_SECRET];
    int key_size;
} CipherSlot;

struct PageCrypto {
    EVP_MAC_CTX *mac;  // keyed with mac_key for mac_digest; reset to its inner state per page
    char mac_digest[NAME_SIZE];
    unsigned char mac_key[PAGE_MAX_SECRET];
    int mac_key_size;
    EVP_CIPHER *cipher;  // fetched once for cipher_name
    char cipher_name[NAME_SIZE];
    CipherSlot slots[2];  // [0] decrypts, [1] encrypts
};

PageCrypto *page_crypto_new(void) {
    return calloc(1, sizeof(PageCrypto));
}

static void forget_mac(PageCrypto *crypto) {
    EVP_MAC_CTX_free(crypto->mac);  // wipes the keyed state
    crypto->mac = NULL;
    OPENSSL_cleanse(crypto->mac_key, sizeof crypto->mac_key);
    crypto->mac_key_size = 0;
    crypto->mac_digest[0] = 0;
}

static void forget_slot(CipherSlot *slot) {
    EVP_CIPHER_CTX_free(slot->context);  // wipes the key schedule
    slot->context = NULL;
    OPENSSL_cleanse(slot->key, sizeof slot->key);
    slot->key_size = 0;
}

// Forgets the cipher algorithm and both directions' contexts (the HMAC stays).
static void forget_cipher(PageCrypto *crypto) {
    forget_slot(&crypto->slots[0]);
    forget_slot(&crypto->slots[1]);
    EVP_CIPHER_free(crypto->cipher);
    crypto->cipher = NULL;
    crypto->cipher_name[0] = 0;
}

void page_crypto_reset(PageCrypto *crypto) {
    if (crypto == NULL) return;
    forget_mac(crypto);
    forget_cipher(crypto);
}

void page_crypto_free(PageCrypto *crypto) {
    page_crypto_reset(crypto);
    free(crypto);
}

static int same_secret(const unsigned char *kept, int kept_size, const unsigned char *key, int key_size) {
    return kept_size == key_size && memcmp(kept, key, (size_t)key_size) == 0;
}

// Keys the HMAC context for `digest` and `key` unless it is keyed so already, then resets it.
static int ready_mac(PageCrypto *crypto, const char *digest, const unsigned char *key, int key_size) {
    if (crypto->mac != NULL && same_secret(crypto->mac_key, crypto->mac_key_size, key, key_size) &&
        strcmp(crypto->mac_digest, digest) == 0) {
        return EVP_MAC_init(crypto->mac, NULL, 0, NULL);  // the same key: back to its inner state
    }
    forget_mac(crypto);
    EVP_MAC *hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
    if (hmac == NULL) return 0;
    crypto->mac = EVP_MAC_CTX_new(hmac);
    EVP_MAC_free(hmac);  // the context holds its own reference
    if (crypto->mac == NULL) return 0;
    OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)digest, 0), OSSL_PARAM_construct_end()};
    if (!EVP_MAC_init(crypto->mac, key, (size_t)key_size, params)) {
        forget_mac(crypto);
        return 0;
    }
    memcpy(crypto->mac_key, key, (size_t)key_size);
    crypto->mac_key_size = key_size;
    strcpy(crypto->mac_digest, digest);
    return 1;
}

int page_crypto_hmac(PageCrypto *crypto, const char *digest, const unsigned char *key, int key_size,
                     const unsigned char *in, int in_size, const unsigned char *in2, int in2_size, unsigned char *out,
                     int mac_size) {
    if (crypto == NULL || in == NULL || in_size < 0 || in2_size < 0 || key_size <= 0 || key_size > PAGE_MAX_SECRET ||
        strlen(digest) >= NAME_SIZE) {
        return 0;
    }
    if (!ready_mac(crypto, digest, key, key_size)) return 0;
    size_t length = 0;
    if (EVP_MAC_CTX_get_mac_size(crypto->mac) != (size_t)mac_size ||
        !EVP_MAC_update(crypto->mac, in, (size_t)in_size) ||
        (in2 != NULL && !EVP_MAC_update(crypto->mac, in2, (size_t)in2_size)) ||
        !EVP_MAC_final(crypto->mac, out, &length, (size_t)mac_size) || length != (size_t)mac_size) {
        forget_mac(crypto);  // set up afresh next time
        return 0;
    }
    return 1;
}

// The algorithm for `name`, fetched once; a change of algorithm drops both directions' contexts.
static const EVP_CIPHER *ready_cipher(PageCrypto *crypto, const char *name) {
    if (crypto->cipher != NULL && strcmp(crypto->cipher_name, name) == 0) return crypto->cipher;
    forget_cipher(crypto);
    if (strlen(name) >= NAME_SIZE) return NULL;
    crypto->cipher = EVP_CIPHER_fetch(NULL, name, NULL);
    if (crypto->cipher == NULL) return NULL;
    strcpy(crypto->cipher_name, name);
    return crypto->cipher;
}

int page_crypto_cipher(PageCrypto *crypto, const char *cipher, int encrypt, const unsigned char *key, int key_size,
                       const unsigned char *iv, int iv_size, const unsigned char *in, int in_size, unsigned char *out) {
    if (crypto == NULL || cipher == NULL || (encrypt != 0 && encrypt != 1) || key_size <= 0 ||
        key_size > PAGE_MAX_SECRET || in == NULL || in_size <= 0) {
        return 0;
    }
    const EVP_CIPHER *algorithm = ready_cipher(crypto, cipher);
    if (algorithm == NULL || EVP_CIPHER_get_key_length(algorithm) != key_size ||
        EVP_CIPHER_get_iv_length(algorithm) != iv_size || in_size % EVP_CIPHER_get_block_size(algorithm) != 0) {
        return 0;
    }
    CipherSlot *slot = &crypto->slots[encrypt];
    int ready;
    if (slot->context != NULL && same_secret(slot->key, slot->key_size, key, key_size)) {
        ready = EVP_CipherInit_ex(slot->context, NULL, NULL, NULL, iv, encrypt);  // the same key: a new IV only
    } else {
        forget_slot(slot);
        slot->context = EVP_CIPHER_CTX_new();
        ready = slot->context != NULL && EVP_CipherInit_ex(slot->context, algorithm, NULL, key, iv, encrypt) &&
                EVP_CIPHER_CTX_set_padding(slot->context, 0);
        if (ready) {
            memcpy(slot->key, key, (size_t)key_size);
            slot->key_size = key_size;
        }
    }
    int written = 0;
    int final = 0;
    if (!ready || !EVP_CipherUpdate(slot->context, out, &written, in, in_size) ||
        !EVP_CipherFinal_ex(slot->context, out + written, &final) || written + final != in_size) {
        forget_slot(slot);
        return 0;
    }
    return 1;
}
