// CofferAtomics: C11 atomic words for Coffer's read path (the reader pool's idle slots, the commit
// clock's counts). Swift's `Synchronization.Atomic` needs macOS 15; the package declares macOS 13.

#ifndef COFFER_ATOMICS_H
#define COFFER_ATOMICS_H

#include <stdbool.h>
#include <stdint.h>

/// The bytes one word takes, and the alignment of an array of them: a cache line, so that a thread
/// writing one word never invalidates the line of another.
#define COFFER_ATOMIC_WORD_SIZE 64

/// Sets the `count` words at `words` (`count * COFFER_ATOMIC_WORD_SIZE` bytes, aligned to that size) to 0.
void coffer_atomic_words_init(void *words, int count);

/// The word `index`'s value. Every operation here is sequentially consistent.
uint64_t coffer_atomic_load(const void *words, int index);
void coffer_atomic_store(void *words, int index, uint64_t value);
/// Stores `value`, returns what the word held.
uint64_t coffer_atomic_exchange(void *words, int index, uint64_t value);
/// Stores `desired` if the word holds `expected`; true when it did.
bool coffer_atomic_compare_exchange(void *words, int index, uint64_t expected, uint64_t desired);
/// Adds `delta` (wrapping), returns the value before.
uint64_t coffer_atomic_fetch_add(void *words, int index, uint64_t delta);

/// A small number for the calling thread, fixed for its life, taken from a process-wide counter on first
/// use: where a thread starts looking in an array of slots, so that threads tend to keep to their own.
uint32_t coffer_thread_number(void);

#endif
