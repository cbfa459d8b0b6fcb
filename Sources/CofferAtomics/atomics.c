#include "CofferAtomics.h"

#include <stdatomic.h>

/// One word on its own cache line.
typedef struct {
    _Alignas(COFFER_ATOMIC_WORD_SIZE) _Atomic uint64_t value;
} coffer_word;

_Static_assert(sizeof(coffer_word) == COFFER_ATOMIC_WORD_SIZE, "a word is one cache line");

static inline _Atomic uint64_t *word(const void *words, int index) {
    return &((coffer_word *)words)[index].value;
}

void coffer_atomic_words_init(void *words, int count) {
    for (int i = 0; i < count; i++) atomic_init(word(words, i), 0);
}

uint64_t coffer_atomic_load(const void *words, int index) { return atomic_load(word(words, index)); }

void coffer_atomic_store(void *words, int index, uint64_t value) { atomic_store(word(words, index), value); }

uint64_t coffer_atomic_exchange(void *words, int index, uint64_t value) {
    return atomic_exchange(word(words, index), value);
}

bool coffer_atomic_compare_exchange(void *words, int index, uint64_t expected, uint64_t desired) {
    return atomic_compare_exchange_strong(word(words, index), &expected, desired);
}

uint64_t coffer_atomic_fetch_add(void *words, int index, uint64_t delta) {
    return atomic_fetch_add(word(words, index), delta);
}

static _Atomic uint32_t next_thread_number = 1;
static _Thread_local uint32_t this_thread_number = 0;

uint32_t coffer_thread_number(void) {
    if (this_thread_number == 0) {
        uint32_t number = atomic_fetch_add(&next_thread_number, 1);
        this_thread_number = number != 0 ? number : 1;
    }
    return this_thread_number;
}
