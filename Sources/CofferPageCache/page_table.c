// The decrypted-page cache's table (see include/CofferPageCache.h and page_table.h).
//
// Sets of WAYS entries, each set guarded by one of STRIPES locks: the set of an IV is chosen among
// the sets of the IV's stripe, so threads working on different stripes never share a lock, a counter
// or a cache line. Replacing the table (capacity change, purge) holds every stripe.
//
// Admission: a page is copied in the second time it is decrypted. The first time only its IV's first
// 8 bytes are noted among the set's GHOSTS, so a page read once (a full scan, a page a commit just
// wrote) costs no copy and pushes nothing out. A set notes twice as many IVs as it holds pages: with
// as many, pages read in turn, a few more of them than the set holds, each pushed the next one's note
// out before it came round again, and none was ever admitted (simulated 20,000 times, a 150-page
// database read twice over a 128-page cache admitted 42 pages at the median and 9 at worst; with twice
// the notes, 118 and 80).
#include "CofferPageCache.h"
#include "page_table.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WAYS 8
#define GHOSTS (2 * WAYS)
#define STRIPES 16

// One page version: its IV (random per write, so also its hash), ciphertext, and what is known of
// it: its MAC under mac_key for page_number, its plaintext under key and cipher, or both.
typedef struct Entry {
    int size;  // ciphertext (= plaintext) bytes; 0 when the entry is empty
    int buffer_size;
    unsigned char *ciphertext;  // buffer_size bytes, followed by the plaintext's buffer_size
    unsigned char *plaintext;
    unsigned char iv[PAGE_IV_SIZE];
    unsigned long long last_use;  // its stripe's clock when last used; 0 when empty

    int has_plaintext;
    int key_size;
    unsigned char key[PAGE_MAX_SECRET];
    const char *cipher;  // the cipher's name as the wrapped provider gives it

    int has_mac;
    int mac_key_size;
    int mac_size;
    unsigned char mac_key[PAGE_MAX_SECRET];
    unsigned char page_number[4];
    unsigned char mac[PAGE_MAX_SECRET];
} Entry;

typedef struct Stripe {
    pthread_mutex_t lock;
    unsigned long long clock;
    unsigned long long hits;
    unsigned long long misses;
    char padding[64];  // keeps neighbouring stripes off each other's cache lines
} Stripe;

static Stripe stripes[STRIPES] = {
#define STRIPE {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, {0}}
    STRIPE, STRIPE, STRIPE, STRIPE, STRIPE, STRIPE, STRIPE, STRIPE,
    STRIPE, STRIPE, STRIPE, STRIPE, STRIPE, STRIPE, STRIPE, STRIPE,
#undef STRIPE
};

// The IVs of pages decrypted once and not cached, as their first 8 bytes.
typedef struct Ghosts {
    unsigned long long tags[GHOSTS];
    unsigned next;
} Ghosts;

// Written only with every stripe held, so reading them under any one stripe is safe.
static Entry *table;
static Ghosts *ghosts;  // one per set
static size_t set_count;  // a multiple of STRIPES; 0 when the cache is off or not built yet
static int table_built;
static size_t capacity = 8 * 1024 * 1024;
// Bytes of page buffers allowed (the cap relative to the open databases' sizes; SIZE_MAX: none), and
// bytes and buffers held now. Changed under a stripe with atomics, so any stripe may read them.
static size_t buffer_limit = (size_t)-1;
static size_t buffer_bytes;
static size_t buffer_count;

static void lock_all(void) {
    for (int i = 0; i < STRIPES; i++) pthread_mutex_lock(&stripes[i].lock);
}

static void unlock_all(void) {
    for (int i = STRIPES - 1; i >= 0; i--) pthread_mutex_unlock(&stripes[i].lock);
}

static void wipe(void *pointer, size_t size) {
    explicit_bzero(pointer, size);
}

// Wipes and frees an entry's page buffer and forgets the entry. Caller holds the entry's stripe.
static void free_entry(Entry *entry) {
    if (entry->ciphertext) {
        wipe(entry->ciphertext, (size_t)entry->buffer_size * 2);
        free(entry->ciphertext);
        __atomic_sub_fetch(&buffer_bytes, (size_t)entry->buffer_size * 2, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&buffer_count, 1, __ATOMIC_RELAXED);
    }
    wipe(entry, sizeof *entry);
}

// Wipes and frees the table. Caller holds every stripe.
static void free_table(void) {
    for (size_t i = 0; i < set_count * WAYS; i++) free_entry(&table[i]);
    free(table);
    free(ghosts);
    table = NULL;
    ghosts = NULL;
    set_count = 0;
    table_built = 0;
}

// Allocates the table's entries for `capacity`, counted for 4 KiB pages; their page buffers are
// allocated as they are first filled. Caller holds every stripe.
static void build_table(void) {
    size_t sets = capacity / (2 * 4096 + sizeof(Entry)) / WAYS / STRIPES * STRIPES;
    table_built = 1;
    if (sets == 0) return;
    table = calloc(sets * WAYS, sizeof(Entry));
    ghosts = calloc(sets, sizeof(Ghosts));
    if (table && ghosts) {
        set_count = sets;
    } else {
        free(table);
        free(ghosts);
        table = NULL;
        ghosts = NULL;
    }
}

void coffer_page_cache_set_capacity(size_t bytes) {
    lock_all();
    free_table();
    capacity = bytes;
    unlock_all();
}

size_t coffer_page_cache_capacity(void) {
    // Without a provider to hook (SQLCipher 4) nothing is ever cached: report it as off.
    if (!coffer_page_cache_available()) return 0;
    pthread_mutex_lock(&stripes[0].lock);
    size_t bytes = capacity;
    pthread_mutex_unlock(&stripes[0].lock);
    return bytes;
}

void coffer_page_cache_purge(void) {
    lock_all();
    free_table();
    unlock_all();
}

void coffer_page_cache_set_limit(size_t bytes) {
    __atomic_store_n(&buffer_limit, bytes, __ATOMIC_RELAXED);
}

size_t coffer_page_cache_limit(void) {
    return __atomic_load_n(&buffer_limit, __ATOMIC_RELAXED);
}

void coffer_page_cache_trim(size_t bytes) {
    lock_all();
    // Frees each set's least recently used page in turn until at most `bytes` are held.
    size_t before = (size_t)-1;
    while (__atomic_load_n(&buffer_bytes, __ATOMIC_RELAXED) > bytes && buffer_bytes < before) {
        before = buffer_bytes;
        for (size_t set = 0; set < set_count && __atomic_load_n(&buffer_bytes, __ATOMIC_RELAXED) > bytes; set++) {
            Entry *oldest = NULL;
            for (int way = 0; way < WAYS; way++) {
                Entry *entry = &table[set * WAYS + way];
                if (entry->ciphertext && (!oldest || entry->last_use < oldest->last_use)) oldest = entry;
            }
            if (oldest) free_entry(oldest);
        }
    }
    unlock_all();
}

void coffer_page_cache_usage(size_t *pages, size_t *bytes) {
    *pages = __atomic_load_n(&buffer_count, __ATOMIC_RELAXED);
    *bytes = __atomic_load_n(&buffer_bytes, __ATOMIC_RELAXED);
}

void coffer_page_cache_counts(uint64_t *hits, uint64_t *misses) {
    *hits = 0;
    *misses = 0;
    for (int i = 0; i < STRIPES; i++) {
        pthread_mutex_lock(&stripes[i].lock);
        *hits += stripes[i].hits;
        *misses += stripes[i].misses;
        pthread_mutex_unlock(&stripes[i].lock);
    }
}

// Locks the stripe of `iv` and returns it with the first entry of the IV's set in `set` and the set's
// ghosts in `set_ghosts`; NULL (and nothing held) when the cache is off.
static Stripe *lock_set(const unsigned char *iv, Entry **set, Ghosts **set_ghosts) {
    unsigned long long hash;
    memcpy(&hash, iv, sizeof hash);
    hash *= 0x9E3779B97F4A7C15ull;
    size_t stripe_index = (size_t)(hash >> 60) % STRIPES;
    Stripe *stripe = &stripes[stripe_index];
    pthread_mutex_lock(&stripe->lock);
    while (!table_built) {
        pthread_mutex_unlock(&stripe->lock);
        lock_all();
        if (!table_built) build_table();
        unlock_all();
        pthread_mutex_lock(&stripe->lock);
    }
    if (set_count == 0) {
        pthread_mutex_unlock(&stripe->lock);
        return NULL;
    }
    size_t sets_per_stripe = set_count / STRIPES;
    size_t set_index = stripe_index + STRIPES * (size_t)(((hash & 0xFFFFFFFFull) * sets_per_stripe) >> 32);
    *set = &table[set_index * WAYS];
    if (set_ghosts) *set_ghosts = &ghosts[set_index];
    return stripe;
}

static Entry *find_page(Entry *set, const unsigned char *iv, const unsigned char *ciphertext, int size) {
    for (int way = 0; way < WAYS; way++) {
        Entry *entry = &set[way];
        if (entry->size == size && memcmp(entry->iv, iv, PAGE_IV_SIZE) == 0 &&
            memcmp(entry->ciphertext, ciphertext, (size_t)size) == 0)
            return entry;
    }
    return NULL;
}

static unsigned long long ghost_tag(const unsigned char *iv) {
    unsigned long long tag;
    memcpy(&tag, iv, sizeof tag);
    return tag;
}

// Whether the page was decrypted once before (and not cached then).
static int is_ghost(const Ghosts *set_ghosts, const unsigned char *iv) {
    unsigned long long tag = ghost_tag(iv);
    for (int i = 0; i < GHOSTS; i++) {
        if (set_ghosts->tags[i] == tag) return 1;
    }
    return 0;
}

// Whether the page was decrypted once before; if not, notes that it now has been.
static int seen_before(Ghosts *set_ghosts, const unsigned char *iv) {
    if (is_ghost(set_ghosts, iv)) return 1;
    set_ghosts->tags[set_ghosts->next] = ghost_tag(iv);
    set_ghosts->next = (set_ghosts->next + 1) % GHOSTS;
    return 0;
}

// The entry to keep a page in: the least recently used one, refilled with the page and knowing
// nothing about it yet; when a new buffer would pass the limit, the least recently used one that has
// a buffer big enough. NULL when there is none, or memory runs out.
static Entry *admit(Entry *set, const unsigned char *iv, const unsigned char *ciphertext, int size) {
    Entry *entry = &set[0];
    for (int way = 1; way < WAYS; way++) {
        if (set[way].last_use < entry->last_use) entry = &set[way];
    }
    if (entry->buffer_size < size &&
        __atomic_load_n(&buffer_bytes, __ATOMIC_RELAXED) + (size_t)size * 2 > __atomic_load_n(&buffer_limit, __ATOMIC_RELAXED)) {
        entry = NULL;
        for (int way = 0; way < WAYS; way++) {
            if (set[way].buffer_size >= size && (!entry || set[way].last_use < entry->last_use)) entry = &set[way];
        }
        if (!entry) return NULL;
    }
    if (entry->buffer_size < size) {
        unsigned char *buffer = malloc((size_t)size * 2);
        if (!buffer) return NULL;
        free_entry(entry);
        entry->ciphertext = buffer;
        entry->plaintext = buffer + size;
        entry->buffer_size = size;
        __atomic_add_fetch(&buffer_bytes, (size_t)size * 2, __ATOMIC_RELAXED);
        __atomic_add_fetch(&buffer_count, 1, __ATOMIC_RELAXED);
    }
    entry->size = size;
    memcpy(entry->iv, iv, PAGE_IV_SIZE);
    memcpy(entry->ciphertext, ciphertext, (size_t)size);
    entry->has_plaintext = 0;
    entry->has_mac = 0;
    wipe(entry->key, PAGE_MAX_SECRET);
    wipe(entry->mac_key, PAGE_MAX_SECRET);
    return entry;
}

int page_table_find_mac(const unsigned char *iv, const unsigned char *ciphertext, int size,
                        const unsigned char *mac_key, int mac_key_size, const unsigned char *page_number,
                        unsigned char *mac, int mac_size) {
    Entry *set;
    Stripe *stripe = lock_set(iv, &set, NULL);
    if (!stripe) return 0;
    Entry *entry = find_page(set, iv, ciphertext, size);
    int found = entry && entry->has_mac && entry->mac_key_size == mac_key_size && entry->mac_size == mac_size &&
                memcmp(entry->mac_key, mac_key, (size_t)mac_key_size) == 0 &&
                memcmp(entry->page_number, page_number, 4) == 0;
    if (found) {
        memcpy(mac, entry->mac, (size_t)mac_size);
        entry->last_use = ++stripe->clock;
    }
    pthread_mutex_unlock(&stripe->lock);
    return found;
}

void page_table_store_mac(const unsigned char *iv, const unsigned char *ciphertext, int size,
                          const unsigned char *mac_key, int mac_key_size, const unsigned char *page_number,
                          const unsigned char *mac, int mac_size) {
    Entry *set;
    Ghosts *set_ghosts;
    Stripe *stripe = lock_set(iv, &set, &set_ghosts);
    if (!stripe) return;
    // Only the decryption that follows notes a first sighting: a MAC alone admits nothing new.
    Entry *entry = find_page(set, iv, ciphertext, size);
    if (!entry && is_ghost(set_ghosts, iv)) entry = admit(set, iv, ciphertext, size);
    if (entry) {
        entry->has_mac = 1;
        entry->mac_key_size = mac_key_size;
        entry->mac_size = mac_size;
        memcpy(entry->mac_key, mac_key, (size_t)mac_key_size);
        memcpy(entry->page_number, page_number, 4);
        memcpy(entry->mac, mac, (size_t)mac_size);
        entry->last_use = ++stripe->clock;
    }
    pthread_mutex_unlock(&stripe->lock);
}

int page_table_find_plaintext(const unsigned char *iv, const unsigned char *ciphertext, int size,
                              const unsigned char *key, int key_size, const char *cipher, unsigned char *plaintext) {
    Entry *set;
    Stripe *stripe = lock_set(iv, &set, NULL);
    if (!stripe) return 0;
    Entry *entry = find_page(set, iv, ciphertext, size);
    int found = entry && entry->has_plaintext && entry->key_size == key_size && strcmp(entry->cipher, cipher) == 0 &&
                memcmp(entry->key, key, (size_t)key_size) == 0;
    if (found) {
        memcpy(plaintext, entry->plaintext, (size_t)size);
        entry->last_use = ++stripe->clock;
        stripe->hits++;
    } else {
        stripe->misses++;
    }
    pthread_mutex_unlock(&stripe->lock);
    return found;
}

void page_table_store_plaintext(const unsigned char *iv, const unsigned char *ciphertext, int size,
                                const unsigned char *key, int key_size, const char *cipher,
                                const unsigned char *plaintext) {
    Entry *set;
    Ghosts *set_ghosts;
    Stripe *stripe = lock_set(iv, &set, &set_ghosts);
    if (!stripe) return;
    Entry *entry = find_page(set, iv, ciphertext, size);
    if (!entry && seen_before(set_ghosts, iv)) entry = admit(set, iv, ciphertext, size);
    if (entry) {
        entry->has_plaintext = 1;
        entry->key_size = key_size;
        memcpy(entry->key, key, (size_t)key_size);
        entry->cipher = cipher;
        memcpy(entry->plaintext, plaintext, (size_t)size);
        entry->last_use = ++stripe->clock;
    }
    pthread_mutex_unlock(&stripe->lock);
}
