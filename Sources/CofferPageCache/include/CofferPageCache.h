// The decrypted-page cache behind `DecryptedPageCache`: one per process, shared by every encrypted
// connection Coffer opens, and kept across commits.
//
// SQLite empties a connection's page cache whenever another connection has committed, so in WAL mode
// a reader re-reads and SQLCipher re-authenticates and re-decrypts (HMAC-SHA1 plus AES-256-CBC, about
// 79,000 instructions per 4 KiB page here) every page it touches after each commit — even the pages
// the commit did not change. This cache memoizes SQLCipher's two per-page functions, exactly: a page
// is served from it only when its ciphertext, IV, page number and keys are byte-for-byte those of a
// page it authenticated and decrypted before, and then the answer is the one the real function gives.
// A changed or damaged page never matches, so it is authenticated as before. A page is copied in the
// second time it is decrypted, so a page read once (a full scan) costs no copy and evicts nothing;
// pages this process encrypts are not copied in.
//
// It is installed as a SQLCipher crypto provider wrapping the library's own (OpenSSL) provider, for
// the connections keyed through `coffer_page_cache_key`. SQLCipher copies the process's provider into a
// connection when the connection is keyed. On SQLCipher 3.4.1 the wrapper becomes the process's default
// at the first such key and stays (a connection keyed elsewhere while it was registered only for the
// moment could get one of its two contexts from each provider); connections keyed any other way forward
// every call to the library's provider. On 4.x (one provider context per connection) it is registered
// for just that moment. SQLCipher 3.4.1 and 4.x have providers of different shapes; provider.c wraps each.
//
// The same wrapper computes what the cache does not hold with OpenSSL objects kept per connection
// (page_crypto.h) when the wrapped provider is SQLCipher's OpenSSL one: SQLCipher's own fetches the
// algorithms and builds and frees its contexts for every page, which OpenSSL 3 makes cost about a
// third of a 4 KiB page's HMAC and decryption. This holds with the cache's capacity at 0 too.
//
// This header declares no SQLite types, so Swift can import it beside CSQLCipher.
#ifndef COFFER_PAGE_CACHE_H
#define COFFER_PAGE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Keys `db` (an `sqlite3 *`) like `sqlite3_key`, with the wrapping provider; the connection uses the
/// cache if the cache has a capacity now. Returns `sqlite3_key`'s result code.
int coffer_page_cache_key(void *db, const void *key, int key_size);

/// 1 when the cache can wrap the linked SQLCipher's crypto provider (3.4.1 and 4.x both); with 0 the
/// capacity is always 0, nothing is cached, and `coffer_page_cache_key` is plain `sqlite3_key`.
int coffer_page_cache_available(void);

/// Sets the cache's capacity in bytes (each cached page holds its ciphertext and its plaintext) and
/// empties it, wiping what it held. 0 turns caching off for every connection. Safe at any time.
void coffer_page_cache_set_capacity(size_t bytes);

/// The capacity in bytes.
size_t coffer_page_cache_capacity(void);

/// Wipes and forgets every cached page; the capacity stays.
void coffer_page_cache_purge(void);

/// Caps the bytes of cached pages at `bytes` (SIZE_MAX: no cap beyond the capacity): new pages then
/// replace old ones rather than take more memory. What is held already stays until `trim`.
void coffer_page_cache_set_limit(size_t bytes);

/// The cap `coffer_page_cache_set_limit` set last (SIZE_MAX when none).
size_t coffer_page_cache_limit(void);

/// Wipes and frees least recently used pages until at most `bytes` of pages are held.
void coffer_page_cache_trim(size_t bytes);

/// The pages cached now and the bytes their buffers take (ciphertext and plaintext).
void coffer_page_cache_usage(size_t *pages, size_t *bytes);

/// How many page HMACs and page ciphers (encryptions and decryptions) the connections keyed through
/// `coffer_page_cache_key` computed with OpenSSL objects kept between pages (`kept`), and how many the
/// linked SQLCipher's own provider computed (`provider`: a provider other than OpenSSL, or a call the
/// kept objects could not serve), since the process started. Pages served by the cache count in neither.
void coffer_page_crypto_counts(uint64_t *kept, uint64_t *provider);

/// Page decryptions since the process started: served from the cache, and computed.
void coffer_page_cache_counts(uint64_t *hits, uint64_t *misses);

#ifdef __cplusplus
}
#endif

#endif
