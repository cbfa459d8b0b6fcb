// The caching crypto provider (see include/CofferPageCache.h): SQLCipher's own provider with its
// per-page HMAC and cipher functions memoized in the page table, and computed with kept OpenSSL objects
// (page_crypto.h) when the wrapped provider is SQLCipher's OpenSSL one. Includes SQLCipher's header,
// never the system SQLite's.
#include "CofferPageCache.h"
#include "page_crypto.h"
#include "page_table.h"

#define SQLITE_HAS_CODEC 1  // declares sqlite3_key
#include <sqlcipher/sqlite3.h>

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

// Page HMACs and ciphers computed with page_crypto's kept objects, and by the wrapped provider itself.
static uint64_t kept_count;
static uint64_t provider_count;

void coffer_page_crypto_counts(uint64_t *kept, uint64_t *provider) {
    *kept = __atomic_load_n(&kept_count, __ATOMIC_RELAXED);
    *provider = __atomic_load_n(&provider_count, __ATOMIC_RELAXED);
}

// What both libraries' wrappers share: the wrapped provider is SQLCipher's OpenSSL one (page_crypto then
// computes what it would), and the cipher contexts made by the caching provider and not yet freed.
static int fast_crypto;
static long live_contexts;

// The caching provider's context: the wrapped provider's own, which every wrapped function is given, and
// what this file keeps beside it. `magic` marks it: a function of the caching provider handed a context the
// wrapped provider made itself (see as_context) forwards it untouched instead of reading it as a Context.
typedef struct Context {
    uint64_t magic;
    void *inner;
    PageCrypto *crypto;  // NULL when fast_crypto is off or the connection was keyed elsewhere
    int caches;          // keyed through coffer_page_cache_key while the page cache had a capacity
    int counted;         // keyed through coffer_page_cache_key: counted in live_contexts
} Context;

#define CONTEXT_MAGIC 0x436f666665724378ULL  // "CofferCx"

// `ctx` as a Context, or NULL when it is the wrapped provider's own (every provider context SQLCipher
// allocates holds at least the eight bytes read here).
static Context *as_context(void *ctx) {
    Context *context = ctx;
    return context != NULL && context->magic == CONTEXT_MAGIC ? context : NULL;
}

static void *inner(void *ctx) {
    Context *context = as_context(ctx);
    return context ? context->inner : ctx;
}

// Set while this thread keys a connection through coffer_page_cache_key: only those connections' contexts
// use the page cache and the kept OpenSSL objects. Every other context the caching provider makes (an
// attached database's, a backup file's, an app's own or the benchmark's raw C connections) forwards each
// call to SQLCipher's own provider, as if it were not there.
static _Thread_local int keying_through_coffer;

// The caching provider's ctx_init around the wrapped one's. SQLCipher makes two cipher contexts per keyed
// connection on 3.4.1 (one on 4.x) and frees them when it closes. Only the contexts of connections keyed
// through coffer_page_cache_key are counted in live_contexts (the cache is wiped when the last of them
// goes, whatever other connections stay open); a context whose allocation failed is not counted
// (SQLCipher then frees it with `*ctx` NULL).
static int context_init(void **ctx, int (*wrapped_init)(void **ctx)) {
    Context *context = calloc(1, sizeof *context);
    *ctx = context;
    if (context == NULL) return SQLITE_NOMEM;
    context->magic = CONTEXT_MAGIC;
    context->counted = keying_through_coffer;
    if (context->counted) __atomic_add_fetch(&live_contexts, 1, __ATOMIC_ACQ_REL);
    context->caches = keying_through_coffer && coffer_page_cache_capacity() > 0;
    // Without its own state it answers through the wrapped provider.
    if (fast_crypto && keying_through_coffer) context->crypto = page_crypto_new();
    return wrapped_init(&context->inner);
}

// The caching provider's ctx_free around the wrapped one's. Once the last connection keyed through
// coffer_page_cache_key has closed, the plaintext the cache holds is wiped.
static int context_free(void **ctx, int (*wrapped_free)(void **ctx)) {
    if (*ctx != NULL && as_context(*ctx) == NULL) return wrapped_free(ctx);  // the wrapped provider's own
    Context *context = *ctx;
    if (context == NULL) return SQLITE_OK;
    int counted = context->counted;
    context->magic = 0;
    int result = wrapped_free(&context->inner);
    page_crypto_free(context->crypto);
    free(context);
    *ctx = NULL;
    if (counted && __atomic_sub_fetch(&live_contexts, 1, __ATOMIC_ACQ_REL) == 0) coffer_page_cache_purge();
    return result;
}

// Counts a page computed with page_crypto (`kept` 1) or by the wrapped provider.
static void count(int kept) {
    __atomic_add_fetch(kept ? &kept_count : &provider_count, 1, __ATOMIC_RELAXED);
}

// SQLCipher 4 (SQLite 3.26 and later) changed the provider's shape (an algorithm argument to hmac and
// get_hmac_sz, init/shutdown in place of activate/deactivate, a list of providers) and no longer exports
// sqlcipher_activate: each library gets its own wrapper below. SQLCipher 3.4.1 is SQLite 3.15.2.
#if SQLITE_VERSION_NUMBER < 3026000

// SQLCipher 3.4's crypto provider (its sqlcipher.h, which Debian does not install): the order of
// these function pointers is the library's ABI.
typedef struct Provider {
    int (*activate)(void *ctx);
    int (*deactivate)(void *ctx);
    const char *(*get_provider_name)(void *ctx);
    int (*add_random)(void *ctx, void *buffer, int length);
    int (*random)(void *ctx, void *buffer, int length);
    int (*hmac)(void *ctx, unsigned char *hmac_key, int key_sz, unsigned char *in, int in_sz, unsigned char *in2,
                int in2_sz, unsigned char *out);
    int (*kdf)(void *ctx, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz, int workfactor,
               int key_sz, unsigned char *key);
    int (*cipher)(void *ctx, int mode, unsigned char *key, int key_sz, unsigned char *iv, unsigned char *in, int in_sz,
                  unsigned char *out);
    int (*set_cipher)(void *ctx, const char *cipher_name);
    const char *(*get_cipher)(void *ctx);
    int (*get_key_sz)(void *ctx);
    int (*get_iv_sz)(void *ctx);
    int (*get_block_sz)(void *ctx);
    int (*get_hmac_sz)(void *ctx);
    int (*ctx_copy)(void *target_ctx, void *source_ctx);
    int (*ctx_cmp)(void *c1_ctx, void *c2_ctx);
    int (*ctx_init)(void **ctx);
    int (*ctx_free)(void **ctx);
    int (*fips_status)(void *ctx);
    const char *(*get_provider_version)(void *ctx);
} Provider;

// Exported by libsqlcipher 3.4.1.
extern void sqlcipher_activate(void);
extern Provider *sqlcipher_get_provider(void);
extern int sqlcipher_register_provider(Provider *provider);

#define CIPHER_ENCRYPT 1

static pthread_mutex_t provider_lock = PTHREAD_MUTEX_INITIALIZER;
static Provider wrapped;  // the library's own provider, copied before the first swap
static int have_wrapped;


// SQLCipher authenticates a page as HMAC(mac_key, ciphertext ‖ IV, page number), IV last. 3.4.1's HMAC
// is always SHA-1.
static int page_hmac(Context *context, unsigned char *mac_key, int key_size, unsigned char *in, int in_size,
                     unsigned char *in2, int in2_size, unsigned char *out, int mac_size) {
    if (context->crypto != NULL &&
        page_crypto_hmac(context->crypto, "SHA1", mac_key, key_size, in, in_size, in2, in2_size, out, mac_size)) {
        count(1);
        return SQLITE_OK;
    }
    count(0);
    return wrapped.hmac(context->inner, mac_key, key_size, in, in_size, in2, in2_size, out);
}

static int cached_hmac(void *ctx, unsigned char *mac_key, int key_size, unsigned char *in, int in_size,
                       unsigned char *in2, int in2_size, unsigned char *out) {
    Context *context = as_context(ctx);
    if (context == NULL) return wrapped.hmac(ctx, mac_key, key_size, in, in_size, in2, in2_size, out);
    int mac_size = wrapped.get_hmac_sz(context->inner);
    if (!context->caches || in_size <= PAGE_IV_SIZE || in2_size != 4 || key_size > PAGE_MAX_SECRET ||
        mac_size > PAGE_MAX_SECRET || mac_size <= 0) {
        return page_hmac(context, mac_key, key_size, in, in_size, in2, in2_size, out, mac_size);
    }
    int size = in_size - PAGE_IV_SIZE;
    const unsigned char *iv = in + size;
    if (page_table_find_mac(iv, in, size, mac_key, key_size, in2, out, mac_size)) return SQLITE_OK;
    int result = page_hmac(context, mac_key, key_size, in, in_size, in2, in2_size, out, mac_size);
    if (result == SQLITE_OK) page_table_store_mac(iv, in, size, mac_key, key_size, in2, out, mac_size);
    return result;
}

static int page_cipher(Context *context, const char *cipher, int mode, unsigned char *key, int key_size,
                       unsigned char *iv, unsigned char *in, int in_size, unsigned char *out) {
    if (context->crypto != NULL && cipher != NULL &&
        page_crypto_cipher(context->crypto, cipher, mode == CIPHER_ENCRYPT, key, key_size, iv, PAGE_IV_SIZE, in,
                           in_size, out)) {
        count(1);
        return SQLITE_OK;
    }
    count(0);
    return wrapped.cipher(context->inner, mode, key, key_size, iv, in, in_size, out);
}

static int cached_cipher(void *ctx, int mode, unsigned char *key, int key_size, unsigned char *iv, unsigned char *in,
                         int in_size, unsigned char *out) {
    Context *context = as_context(ctx);
    if (context == NULL) return wrapped.cipher(ctx, mode, key, key_size, iv, in, in_size, out);
    const char *cipher = wrapped.get_cipher(context->inner);
    // Pages this process encrypts are not cached: readers cache them once they have read them twice.
    if (!context->caches || mode == CIPHER_ENCRYPT || in_size <= 0 || key_size > PAGE_MAX_SECRET) {
        return page_cipher(context, cipher, mode, key, key_size, iv, in, in_size, out);
    }
    if (page_table_find_plaintext(iv, in, in_size, key, key_size, cipher, out)) return SQLITE_OK;
    int result = page_cipher(context, cipher, mode, key, key_size, iv, in, in_size, out);
    if (result == SQLITE_OK) page_table_store_plaintext(iv, in, in_size, key, key_size, cipher, out);
    return result;
}

static int counted_ctx_init(void **ctx) {
    return context_init(ctx, wrapped.ctx_init);
}

static int counted_ctx_free(void **ctx) {
    return context_free(ctx, wrapped.ctx_free);
}

// Every other function of the wrapped provider, given its own context.
static const char *wrapped_get_provider_name(void *ctx) {
    return wrapped.get_provider_name(inner(ctx));
}
static int wrapped_add_random(void *ctx, void *buffer, int length) {
    return wrapped.add_random(inner(ctx), buffer, length);
}
static int wrapped_random(void *ctx, void *buffer, int length) {
    return wrapped.random(inner(ctx), buffer, length);
}
static int wrapped_kdf(void *ctx, const unsigned char *pass, int pass_sz, unsigned char *salt, int salt_sz,
                       int workfactor, int key_sz, unsigned char *key) {
    return wrapped.kdf(inner(ctx), pass, pass_sz, salt, salt_sz, workfactor, key_sz, key);
}
static int wrapped_set_cipher(void *ctx, const char *cipher_name) {
    return wrapped.set_cipher(inner(ctx), cipher_name);
}
static const char *wrapped_get_cipher(void *ctx) {
    return wrapped.get_cipher(inner(ctx));
}
static int wrapped_get_key_sz(void *ctx) {
    return wrapped.get_key_sz(inner(ctx));
}
static int wrapped_get_iv_sz(void *ctx) {
    return wrapped.get_iv_sz(inner(ctx));
}
static int wrapped_get_block_sz(void *ctx) {
    return wrapped.get_block_sz(inner(ctx));
}
static int wrapped_get_hmac_sz(void *ctx) {
    return wrapped.get_hmac_sz(inner(ctx));
}
static int wrapped_ctx_copy(void *target_ctx, void *source_ctx) {
    Context *target = as_context(target_ctx);
    if (target != NULL) page_crypto_reset(target->crypto);  // set up again for the copied cipher and keys
    return wrapped.ctx_copy(inner(target_ctx), inner(source_ctx));
}
static int wrapped_ctx_cmp(void *c1_ctx, void *c2_ctx) {
    return wrapped.ctx_cmp(inner(c1_ctx), inner(c2_ctx));
}
static int wrapped_fips_status(void *ctx) {
    return wrapped.fips_status(inner(ctx));
}
static const char *wrapped_get_provider_version(void *ctx) {
    return wrapped.get_provider_version(inner(ctx));
}

// Registers a fresh copy of `provider` as the process's default (SQLCipher frees the previous one).
static int register_copy(const Provider *provider) {
    Provider *copy = sqlite3_malloc((int)sizeof *copy);
    if (!copy) return SQLITE_NOMEM;
    *copy = *provider;
    return sqlcipher_register_provider(copy);
}

// Installs the caching provider as the process's default, once and for good (under provider_lock): from
// then on every cipher context SQLCipher makes is a Context, whoever keys the connection (one made
// elsewhere forwards to SQLCipher's provider: see keying_through_coffer). It used to be the
// default only while coffer_page_cache_key keyed a connection and swapped back after; a connection keyed
// elsewhere at that moment (a backup file keyed with sqlite3_key, an ATTACH ... KEY) could then get its
// read context from one provider and its write context from the other, and 3.4.1's ctx_copy copies the
// read context's provider functions over the write context's: functions of one provider ran on the
// other's context, and the Context's free ran on SQLCipher's allocation ("free(): invalid pointer", CI,
// ObservationMaintenanceTests, 2026-12-01).
static int install(void) {
    static int installed;
    if (installed) return 1;
    if (!have_wrapped) {
        // An activation of our own, never ended, so SQLCipher keeps a default provider for good.
        sqlcipher_activate();
        Provider *current = sqlcipher_get_provider();
        if (current) {
            wrapped = *current;
            have_wrapped = 1;
            const char *name = wrapped.get_provider_name(NULL);  // OpenSSL's ignores its context
            fast_crypto = name != NULL && strcmp(name, "openssl") == 0;
        }
    }
    if (!have_wrapped) return 0;
    Provider caching = wrapped;
    caching.get_provider_name = wrapped_get_provider_name;
    caching.add_random = wrapped_add_random;
    caching.random = wrapped_random;
    caching.hmac = cached_hmac;
    caching.kdf = wrapped_kdf;
    caching.cipher = cached_cipher;
    caching.set_cipher = wrapped_set_cipher;
    caching.get_cipher = wrapped_get_cipher;
    caching.get_key_sz = wrapped_get_key_sz;
    caching.get_iv_sz = wrapped_get_iv_sz;
    caching.get_block_sz = wrapped_get_block_sz;
    caching.get_hmac_sz = wrapped_get_hmac_sz;
    caching.ctx_copy = wrapped_ctx_copy;
    caching.ctx_cmp = wrapped_ctx_cmp;
    caching.ctx_init = counted_ctx_init;
    caching.ctx_free = counted_ctx_free;
    caching.fips_status = wrapped_fips_status;
    caching.get_provider_version = wrapped_get_provider_version;
    installed = register_copy(&caching) == SQLITE_OK;
    return installed;
}

int coffer_page_cache_key(void *db, const void *key, int key_size) {
    pthread_mutex_lock(&provider_lock);
    install();
    pthread_mutex_unlock(&provider_lock);
    // Should the install have failed, SQLCipher's own provider keys the connection: same pages, no cache.
    keying_through_coffer = 1;
    int result = sqlite3_key(db, key, key_size);
    keying_through_coffer = 0;
    return result;
}

int coffer_page_cache_available(void) {
    return 1;
}

#else  // SQLCipher 4

// SQLCipher 4's crypto provider (its sqlcipher.h, which SQLCipher builds do not install): the order of
// these function pointers is the library's ABI. Providers form a list; registering one already on it
// moves it back to the front without initialising it again, and each cipher context keeps the provider
// that was the default when it was made.
typedef struct Provider {
    int (*init)(void);
    void (*shutdown)(void);
    const char *(*get_provider_name)(void *ctx);
    int (*add_random)(void *ctx, const void *buffer, int length);
    int (*random)(void *ctx, void *buffer, int length);
    int (*hmac)(void *ctx, int algorithm, const unsigned char *hmac_key, int key_sz, const unsigned char *in, int in_sz,
                const unsigned char *in2, int in2_sz, unsigned char *out);
    int (*kdf)(void *ctx, int algorithm, const unsigned char *pass, int pass_sz, const unsigned char *salt,
               int salt_sz, int workfactor, int key_sz, unsigned char *key);
    int (*cipher)(void *ctx, int mode, const unsigned char *key, int key_sz, const unsigned char *iv,
                  const unsigned char *in, int in_sz, unsigned char *out);
    const char *(*get_cipher)(void *ctx);
    int (*get_key_sz)(void *ctx);
    int (*get_iv_sz)(void *ctx);
    int (*get_block_sz)(void *ctx);
    int (*get_hmac_sz)(void *ctx, int algorithm);
    int (*ctx_init)(void **ctx);
    int (*ctx_free)(void **ctx);
    int (*fips_status)(void *ctx);
    const char *(*get_provider_version)(void *ctx);
    struct Provider *next;
} Provider;

// Exported by SQLCipher 4.
extern Provider *sqlcipher_get_provider(void);
extern int sqlcipher_register_provider(Provider *provider);
extern void *sqlcipher_malloc(sqlite3_uint64 size);

#define CIPHER_ENCRYPT 1
#define HMAC_SHA1 0  // SQLCipher 4's hmac algorithm numbers
#define HMAC_SHA256 1
#define HMAC_SHA512 2

static pthread_mutex_t provider_lock = PTHREAD_MUTEX_INITIALIZER;
static Provider *original;  // the library's default provider, on its list
static Provider *caching;   // ours, on the list once registered (SQLCipher frees both at shutdown)
static Provider wrapped;    // a copy of the original's functions


static const char *digest_name(int algorithm) {
    switch (algorithm) {
        case HMAC_SHA1: return "SHA1";
        case HMAC_SHA256: return "SHA256";
        case HMAC_SHA512: return "SHA512";
        default: return NULL;
    }
}

static int page_hmac(Context *context, int algorithm, const unsigned char *mac_key, int key_size,
                     const unsigned char *in, int in_size, const unsigned char *in2, int in2_size, unsigned char *out,
                     int mac_size) {
    const char *digest = digest_name(algorithm);
    if (context->crypto != NULL && digest != NULL &&
        page_crypto_hmac(context->crypto, digest, mac_key, key_size, in, in_size, in2, in2_size, out, mac_size)) {
        count(1);
        return SQLITE_OK;
    }
    count(0);
    return wrapped.hmac(context->inner, algorithm, mac_key, key_size, in, in_size, in2, in2_size, out);
}

// SQLCipher authenticates a page as HMAC(mac_key, ciphertext ‖ IV, page number), IV last. The MAC's size
// tells the algorithms apart in the table (SHA-1 20 bytes, SHA-256 32, SHA-512 64).
static int cached_hmac(void *ctx, int algorithm, const unsigned char *mac_key, int key_size, const unsigned char *in,
                       int in_size, const unsigned char *in2, int in2_size, unsigned char *out) {
    Context *context = as_context(ctx);
    if (context == NULL) return wrapped.hmac(ctx, algorithm, mac_key, key_size, in, in_size, in2, in2_size, out);
    int mac_size = wrapped.get_hmac_sz(context->inner, algorithm);
    if (!context->caches || in_size <= PAGE_IV_SIZE || in2_size != 4 || key_size > PAGE_MAX_SECRET ||
        mac_size > PAGE_MAX_SECRET || mac_size <= 0) {
        return page_hmac(context, algorithm, mac_key, key_size, in, in_size, in2, in2_size, out, mac_size);
    }
    int size = in_size - PAGE_IV_SIZE;
    const unsigned char *iv = in + size;
    if (page_table_find_mac(iv, in, size, mac_key, key_size, in2, out, mac_size)) return SQLITE_OK;
    int result = page_hmac(context, algorithm, mac_key, key_size, in, in_size, in2, in2_size, out, mac_size);
    if (result == SQLITE_OK) page_table_store_mac(iv, in, size, mac_key, key_size, in2, out, mac_size);
    return result;
}

static int page_cipher(Context *context, const char *cipher, int mode, const unsigned char *key, int key_size,
                       const unsigned char *iv, const unsigned char *in, int in_size, unsigned char *out) {
    if (context->crypto != NULL && cipher != NULL &&
        page_crypto_cipher(context->crypto, cipher, mode == CIPHER_ENCRYPT, key, key_size, iv, PAGE_IV_SIZE, in,
                           in_size, out)) {
        count(1);
        return SQLITE_OK;
    }
    count(0);
    return wrapped.cipher(context->inner, mode, key, key_size, iv, in, in_size, out);
}

static int cached_cipher(void *ctx, int mode, const unsigned char *key, int key_size, const unsigned char *iv,
                         const unsigned char *in, int in_size, unsigned char *out) {
    Context *context = as_context(ctx);
    if (context == NULL) return wrapped.cipher(ctx, mode, key, key_size, iv, in, in_size, out);
    const char *cipher = wrapped.get_cipher(context->inner);
    // Pages this process encrypts are not cached: readers cache them once they have read them twice.
    if (!context->caches || mode == CIPHER_ENCRYPT || in_size <= 0 || key_size > PAGE_MAX_SECRET) {
        return page_cipher(context, cipher, mode, key, key_size, iv, in, in_size, out);
    }
    if (page_table_find_plaintext(iv, in, in_size, key, key_size, cipher, out)) return SQLITE_OK;
    int result = page_cipher(context, cipher, mode, key, key_size, iv, in, in_size, out);
    if (result == SQLITE_OK) page_table_store_plaintext(iv, in, in_size, key, key_size, cipher, out);
    return result;
}

static int counted_ctx_init(void **ctx) {
    return context_init(ctx, wrapped.ctx_init);
}

static int counted_ctx_free(void **ctx) {
    return context_free(ctx, wrapped.ctx_free);
}

// Every other function of the original provider, given its own context.
static const char *wrapped_get_provider_name(void *ctx) {
    return wrapped.get_provider_name(inner(ctx));
}
static int wrapped_add_random(void *ctx, const void *buffer, int length) {
    return wrapped.add_random(inner(ctx), buffer, length);
}
static int wrapped_random(void *ctx, void *buffer, int length) {
    return wrapped.random(inner(ctx), buffer, length);
}
static int wrapped_kdf(void *ctx, int algorithm, const unsigned char *pass, int pass_sz, const unsigned char *salt,
                       int salt_sz, int workfactor, int key_sz, unsigned char *key) {
    return wrapped.kdf(inner(ctx), algorithm, pass, pass_sz, salt, salt_sz, workfactor, key_sz, key);
}
static const char *wrapped_get_cipher(void *ctx) {
    return wrapped.get_cipher(inner(ctx));
}
static int wrapped_get_key_sz(void *ctx) {
    return wrapped.get_key_sz(inner(ctx));
}
static int wrapped_get_iv_sz(void *ctx) {
    return wrapped.get_iv_sz(inner(ctx));
}
static int wrapped_get_block_sz(void *ctx) {
    return wrapped.get_block_sz(inner(ctx));
}
static int wrapped_get_hmac_sz(void *ctx, int algorithm) {
    return wrapped.get_hmac_sz(inner(ctx), algorithm);
}
static int wrapped_fips_status(void *ctx) {
    return wrapped.fips_status(inner(ctx));
}
static const char *wrapped_get_provider_version(void *ctx) {
    return wrapped.get_provider_version(inner(ctx));
}

int coffer_page_cache_key(void *db, const void *key, int key_size) {
    pthread_mutex_lock(&provider_lock);
    if (caching == NULL) {
        // The connection is open, so SQLCipher is initialised and has its default provider.
        original = sqlcipher_get_provider();
        if (original != NULL) caching = sqlcipher_malloc(sizeof *caching);
        if (caching != NULL) {
            wrapped = *original;
            *caching = wrapped;
            caching->init = NULL;  // nothing of its own to set up or tear down: the original does that
            caching->shutdown = NULL;
            caching->next = NULL;
            caching->get_provider_name = wrapped_get_provider_name;
            caching->add_random = wrapped_add_random;
            caching->random = wrapped_random;
            caching->hmac = cached_hmac;
            caching->kdf = wrapped_kdf;
            caching->cipher = cached_cipher;
            caching->get_cipher = wrapped_get_cipher;
            caching->get_key_sz = wrapped_get_key_sz;
            caching->get_iv_sz = wrapped_get_iv_sz;
            caching->get_block_sz = wrapped_get_block_sz;
            caching->get_hmac_sz = wrapped_get_hmac_sz;
            caching->ctx_init = counted_ctx_init;
            caching->ctx_free = counted_ctx_free;
            caching->fips_status = wrapped_fips_status;
            caching->get_provider_version = wrapped_get_provider_version;
            const char *name = wrapped.get_provider_name(NULL);  // OpenSSL's ignores its context
            fast_crypto = name != NULL && strcmp(name, "openssl") == 0;
        }
    }
    if (caching == NULL) {
        pthread_mutex_unlock(&provider_lock);
        return sqlite3_key(db, key, key_size);
    }
    int swapped = sqlcipher_register_provider(caching) == SQLITE_OK;
    // SQLCipher 4 gives a connection one provider context, made with the default of the moment, so a
    // connection keyed elsewhere during this window is a Context throughout (with the cache off).
    keying_through_coffer = 1;
    int result = sqlite3_key(db, key, key_size);
    keying_through_coffer = 0;
    // Back to the original for everyone else; should that fail, the caching provider answers exactly as
    // the original does.
    if (swapped) sqlcipher_register_provider(original);
    pthread_mutex_unlock(&provider_lock);
    return result;
}

int coffer_page_cache_available(void) {
    return 1;
}

#endif
