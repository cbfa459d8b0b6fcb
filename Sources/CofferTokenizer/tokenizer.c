// The `coffer` FTS3/FTS4 tokenizer: Chinese, Japanese and Korean text as overlapping character bigrams,
// every other script through SQLite's own `unicode61` tokenizer.
//
// Tokens of one input, in order, with one position each:
// - A run of CJK characters c0 c1 … c(n-1) (Han, Hiragana, Katakana, Hangul; see is_cjk) gives n tokens:
//   the bigram c(i)c(i+1) at position p+i for i < n-1, and the last character alone at position p+n-1.
//   Nothing is case-folded (these scripts have no case).
// - Text between CJK runs goes to a `unicode61` cursor (case folding, diacritics removal, Unicode
//   separators, and the options given in `tokenize=coffer "remove_diacritics=0"`…); its tokens keep
//   their order and take the next positions, and their offsets are moved to the whole input.
//
// Why this shape: FTS3 matches a phrase's i-th token at position start+i and ignores the positions the
// tokenizer reports for the query, so the query's tokens for a CJK string S must be a run of consecutive
// positions in every document holding S. With the scheme above, the phrase `"S*"` (S of two or more
// characters) has the bigrams of S then S's last character as a prefix: in a document, the character
// after S (if S does not end a run) starts a bigram that the prefix matches, and S at the end of a run
// ends with the lone character. A single character c is the prefix query `c*`. Coffer's patterns write
// CJK text this way (FullTextPattern); a bare CJK word `世界` without the star is its first bigram only.
//
// The interface (sqlite3_tokenizer_module and its two companions) is the one SQLite documents for FTS3
// tokenizers; Debian does not install fts3_tokenizer.h, so its layout is declared here. The field order
// is the library's ABI.

#include "CofferTokenizer.h"
#include "fts3_interface.h"
#include "segments.h"
#include "utf8.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/// The unicode61 module of the linked library, found by coffer_fts_register.
_Atomic(const sqlite3_tokenizer_module *) coffer_unicode61_module = NULL;

typedef struct CofferTokenizer {
    sqlite3_tokenizer base;
    sqlite3_tokenizer *inner;  // a unicode61 tokenizer, for the text between CJK runs
} CofferTokenizer;

typedef struct CofferCursor {
    sqlite3_tokenizer_cursor base;
    CofferSegments segments;
} CofferCursor;

/// Han (with the iteration and zero marks), Hiragana, Katakana (full and half width) and Hangul.
static inline int is_cjk(unsigned c) {
    if (c < 0x1100) return 0;
    return (c >= 0x4E00 && c <= 0x9FFF)      // CJK Unified Ideographs
           || (c >= 0x3040 && c <= 0x30FF)   // Hiragana, Katakana
           || (c >= 0xAC00 && c <= 0xD7AF)   // Hangul syllables
           || (c >= 0x3400 && c <= 0x4DBF)   // Extension A
           || (c >= 0x1100 && c <= 0x11FF)   // Hangul Jamo
           || (c >= 0x3130 && c <= 0x318F)   // Hangul compatibility Jamo
           || (c >= 0x31F0 && c <= 0x31FF)   // Katakana phonetic extensions
           || (c >= 0xA960 && c <= 0xA97F)   // Hangul Jamo extended A
           || (c >= 0xD7B0 && c <= 0xD7FF)   // Hangul Jamo extended B
           || (c >= 0xF900 && c <= 0xFAFF)   // compatibility ideographs
           || (c >= 0xFF66 && c <= 0xFF9F)   // half-width Katakana
           || (c >= 0x2E80 && c <= 0x2FDF)   // radicals
           || c == 0x3005 || c == 0x3006 || c == 0x3007  // 々 〆 〇
           || (c >= 0x20000 && c <= 0x3134F);  // Extensions B–G, compatibility supplement
}

int coffer_is_cjk(unsigned c) { return is_cjk(c); }

static int coffer_create(int argc, const char *const *argv, sqlite3_tokenizer **out) {
    const sqlite3_tokenizer_module *unicode61 = atomic_load(&coffer_unicode61_module);
    if (unicode61 == NULL) return SQLITE_ERROR;
    CofferTokenizer *tokenizer = calloc(1, sizeof(CofferTokenizer));
    if (tokenizer == NULL) return SQLITE_NOMEM;
    int rc = unicode61->xCreate(argc, argv, &tokenizer->inner);
    if (rc != SQLITE_OK) {
        free(tokenizer);
        return rc;
    }
    tokenizer->inner->pModule = unicode61;  // as FTS does after xCreate
    *out = &tokenizer->base;
    return SQLITE_OK;
}

static int coffer_destroy(sqlite3_tokenizer *base) {
    CofferTokenizer *tokenizer = (CofferTokenizer *)base;
    tokenizer->inner->pModule->xDestroy(tokenizer->inner);
    free(tokenizer);
    return SQLITE_OK;
}

static int coffer_open(sqlite3_tokenizer *base, const char *input, int length, sqlite3_tokenizer_cursor **out) {
    (void)base;
    CofferCursor *cursor = calloc(1, sizeof(CofferCursor));
    if (cursor == NULL) return SQLITE_NOMEM;
    coffer_segments_init(&cursor->segments, input, length);
    *out = &cursor->base;
    return SQLITE_OK;
}

static int coffer_close(sqlite3_tokenizer_cursor *base) {
    CofferCursor *cursor = (CofferCursor *)base;
    coffer_segments_close_inner(&cursor->segments);
    free(cursor);
    return SQLITE_OK;
}

static int coffer_next(sqlite3_tokenizer_cursor *base, const char **token, int *bytes, int *start, int *end,
                       int *position) {
    CofferCursor *cursor = (CofferCursor *)base;
    CofferSegments *segments = &cursor->segments;
    for (;;) {
        if (segments->inner != NULL) {
            int rc = coffer_segments_next_inner(segments, token, bytes, start, end, position);
            if (rc != SQLITE_DONE) return rc;
        }
        if (segments->run_next < segments->run_end) {
            const unsigned char *text = segments->input;
            int at = segments->run_next, first, second = 0;
            coffer_utf8_decode(text + at, segments->run_end - at, &first);
            if (at + first < segments->run_end) {
                coffer_utf8_decode(text + at + first, segments->run_end - at - first, &second);
            }
            // CJK needs no folding: the token is the input's own bytes.
            *token = (const char *)text + at;
            *bytes = first + second;
            *start = at;
            *end = at + first + second;
            *position = segments->position++;
            segments->run_next = at + first;
            return SQLITE_OK;
        }
        int rc = coffer_segments_start(segments, ((CofferTokenizer *)cursor->base.pTokenizer)->inner);
        if (rc != SQLITE_OK) return rc;
    }
}

const sqlite3_tokenizer_module coffer_tokenizer_module = {
    0, coffer_create, coffer_destroy, coffer_open, coffer_close, coffer_next, NULL,
};

int coffer_fts_count_tokens(const char *text, int bytes) {
    sqlite3_tokenizer *tokenizer = NULL;
    sqlite3_tokenizer_cursor *cursor = NULL;
    if (coffer_create(0, NULL, &tokenizer) != SQLITE_OK) return -1;
    tokenizer->pModule = &coffer_tokenizer_module;
    int count = -1;
    if (coffer_open(tokenizer, text, bytes, &cursor) == SQLITE_OK) {
        cursor->pTokenizer = tokenizer;
        const char *token;
        int length, start, end, position, rc;
        count = 0;
        while ((rc = coffer_next(cursor, &token, &length, &start, &end, &position)) == SQLITE_OK) count++;
        if (rc != SQLITE_DONE) count = -1;
        coffer_close(cursor);
    }
    coffer_destroy(tokenizer);
    return count;
}
