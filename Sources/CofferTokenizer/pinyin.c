// The `coffer_pinyin` FTS3/FTS4 tokenizer: Chinese text found by its characters and by pinyin, full or
// by initials, for contact and title search.
//
// Document text, tokens in order:
// - Each CJK character (see coffer_is_cjk) takes one position, where the tokenizer gives several tokens,
//   all with the character's own byte range as offsets (so highlights cover the character): the
//   character itself, folded to its simplified form (資 → 资, Unihan's kSimplifiedVariant; `"fold=0"`
//   turns this off); every toneless reading of the character (单 → dan, shan, chan; ü as v: 吕 → lv);
//   and the first letter of each reading (d, s, c), once each. FTS4 keeps a term's positions per term,
//   so several terms at one position are allowed; a phrase's i-th token matches any of them.
// - Text between CJK runs goes to a `unicode61` cursor, as in the `coffer` tokenizer, one position per
//   token.
//
// Query text: FTS tokenizes each phrase of a MATCH expression with the table's tokenizer and ignores the
// positions it reports, so a query must give exactly one token per position. A phrase that starts with
// COFFER_PINYIN_QUERY_MARK (byte 0x01) is read that way: each CJK character gives only its folded self,
// other text goes to unicode61. Coffer's pinyin patterns (FullTextPattern.pinyin) split what the user
// typed into syllables and initials and write phrases such as "\x01zhang s*" or "\x01中 guo*".
//
// The data (readings and folding) is Tools/pinyin/generate-pinyin-table.py's output, from Unihan.

#include "CofferPinyin.h"
#include "CofferTokenizer.h"
#include "fts3_interface.h"
#include "pinyin_table.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/// The most tokens one character gives: itself, 8 readings at most in the table, and their initials.
#define MAX_CHARACTER_TOKENS 24

typedef struct PinyinTokenizer {
    sqlite3_tokenizer base;
    sqlite3_tokenizer *inner;  // unicode61, for the text between CJK runs
    int fold;                  // fold traditional characters to simplified ones
} PinyinTokenizer;

typedef struct PinyinCursor {
    sqlite3_tokenizer_cursor base;
    const unsigned char *input;
    int length;
    int offset;    // where the next segment starts
    int position;  // the next position
    int query;     // the input started with COFFER_PINYIN_QUERY_MARK
    sqlite3_tokenizer_cursor *inner;
    int inner_base;
    int run_next, run_end;  // the CJK run being read
    // The tokens still to give for the current character, all at `character_position`.
    const char *pending[MAX_CHARACTER_TOKENS];
    int pending_bytes[MAX_CHARACTER_TOKENS];
    int pending_count, pending_next;
    int character_start, character_end, character_position;
    unsigned char folded[4];
} PinyinCursor;

static const char letters[] = "abcdefghijklmnopqrstuvwxyz";

static inline unsigned decode(const unsigned char *text, int available, int *length) {
    unsigned c = text[0];
    if (c < 0x80) {
        *length = 1;
        return c;
    }
    int n = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 0;
    if (n == 0 || n > available) {
        *length = 1;
        return 0xFFFD;
    }
    unsigned value = c & (0x7F >> n);
    for (int i = 1; i < n; i++) {
        if ((text[i] & 0xC0) != 0x80) {
            *length = 1;
            return 0xFFFD;
        }
        value = (value << 6) | (text[i] & 0x3F);
    }
    *length = n;
    return value;
}

static int encode(unsigned c, unsigned char *out) {
    if (c < 0x80) {
        out[0] = (unsigned char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (unsigned char)(0xC0 | (c >> 6));
        out[1] = (unsigned char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (c >> 12));
        out[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (c >> 18));
    out[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (c & 0x3F));
    return 4;
}

/// The offset in coffer_pinyin_sets of `c`'s readings (0: none).
static unsigned reading_set(unsigned c) {
    if (c >= COFFER_PINYIN_DENSE_FIRST && c <= COFFER_PINYIN_DENSE_LAST) {
        return coffer_pinyin_dense[c - COFFER_PINYIN_DENSE_FIRST];
    }
    int low = 0, high = (int)(sizeof(coffer_pinyin_sparse) / sizeof(unsigned)) - 1;
    while (low <= high) {
        int middle = (low + high) / 2;
        unsigned value = coffer_pinyin_sparse[middle] >> 14;
        if (value == c) return coffer_pinyin_sparse[middle] & 0x3FFF;
        if (value < c) low = middle + 1;
        else high = middle - 1;
    }
    return 0;
}

/// `c`'s simplified form, or `c`.
static unsigned simplified(unsigned c) {
    int low = 0, high = (int)(sizeof(coffer_pinyin_fold_from) / sizeof(unsigned)) - 1;
    while (low <= high) {
        int middle = (low + high) / 2;
        unsigned value = coffer_pinyin_fold_from[middle] & 0x3FFFF;
        if (value == c) return (coffer_pinyin_fold_from[middle] >> 18) << 16 | coffer_pinyin_fold_to[middle];
        if (value < c) low = middle + 1;
        else high = middle - 1;
    }
    return c;
}

int coffer_pinyin_reading_count(unsigned c) { return coffer_pinyin_sets[reading_set(c)]; }

const char *coffer_pinyin_reading(unsigned c, int index) {
    const unsigned short *set = coffer_pinyin_sets + reading_set(c);
    if (index < 0 || index >= set[0]) return NULL;
    return coffer_pinyin_syllable_text + coffer_pinyin_syllable_offsets[set[1 + index]];
}

const char *coffer_pinyin_unicode_version(void) { return COFFER_PINYIN_UNICODE_VERSION; }

int coffer_pinyin_syllable_kind(const char *text, int length) {
    if (text == NULL || length <= 0) return 0;
    // The first syllable not less than `text`.
    int low = 0, high = COFFER_PINYIN_SYLLABLE_COUNT;
    while (low < high) {
        int middle = (low + high) / 2;
        const char *syllable = coffer_pinyin_syllable_text + coffer_pinyin_syllable_offsets[middle];
        int order = strncmp(syllable, text, (size_t)length);
        if (order < 0) low = middle + 1;
        else high = middle;
    }
    int kind = 0;
    for (int i = low; i < COFFER_PINYIN_SYLLABLE_COUNT && i < low + 2; i++) {
        const char *syllable = coffer_pinyin_syllable_text + coffer_pinyin_syllable_offsets[i];
        if (strncmp(syllable, text, (size_t)length) != 0) break;
        kind |= syllable[length] == '\0' ? 1 : 2;
    }
    return kind;
}

/// Splits `tokenize=coffer_pinyin …` arguments: `fold=0`/`fold=1` is the pinyin tokenizer's, the rest
/// are unicode61's.
static int pinyin_create(int argc, const char *const *argv, sqlite3_tokenizer **out) {
    const sqlite3_tokenizer_module *unicode61 = atomic_load(&coffer_unicode61_module);
    if (unicode61 == NULL) return SQLITE_ERROR;
    PinyinTokenizer *tokenizer = calloc(1, sizeof(PinyinTokenizer));
    if (tokenizer == NULL) return SQLITE_NOMEM;
    tokenizer->fold = 1;
    const char **rest = calloc((size_t)(argc > 0 ? argc : 1), sizeof(char *));
    if (rest == NULL) {
        free(tokenizer);
        return SQLITE_NOMEM;
    }
    int count = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "fold=0") == 0) tokenizer->fold = 0;
        else if (strcmp(argv[i], "fold=1") == 0) tokenizer->fold = 1;
        else rest[count++] = argv[i];
    }
    int rc = unicode61->xCreate(count, rest, &tokenizer->inner);
    free(rest);
    if (rc != SQLITE_OK) {
        free(tokenizer);
        return rc;
    }
    tokenizer->inner->pModule = unicode61;
    *out = &tokenizer->base;
    return SQLITE_OK;
}

static int pinyin_destroy(sqlite3_tokenizer *base) {
    PinyinTokenizer *tokenizer = (PinyinTokenizer *)base;
    tokenizer->inner->pModule->xDestroy(tokenizer->inner);
    free(tokenizer);
    return SQLITE_OK;
}

static int pinyin_open(sqlite3_tokenizer *base, const char *input, int length, sqlite3_tokenizer_cursor **out) {
    (void)base;
    PinyinCursor *cursor = calloc(1, sizeof(PinyinCursor));
    if (cursor == NULL) return SQLITE_NOMEM;
    if (input == NULL) length = 0;
    else if (length < 0) length = (int)strlen(input);
    cursor->input = (const unsigned char *)input;
    cursor->length = length;
    if (length > 0 && input[0] == COFFER_PINYIN_QUERY_MARK) {
        cursor->query = 1;
        cursor->offset = 1;
    }
    *out = &cursor->base;
    return SQLITE_OK;
}

static void close_inner(PinyinCursor *cursor) {
    if (cursor->inner == NULL) return;
    cursor->inner->pTokenizer->pModule->xClose(cursor->inner);
    cursor->inner = NULL;
}

static int pinyin_close(sqlite3_tokenizer_cursor *base) {
    PinyinCursor *cursor = (PinyinCursor *)base;
    close_inner(cursor);
    free(cursor);
    return SQLITE_OK;
}

static int start_segment(PinyinCursor *cursor) {
    const unsigned char *text = cursor->input;
    int end = cursor->length, start = cursor->offset, at = start, width;
    if (at >= end) return SQLITE_DONE;
    int cjk = text[at] >= 0x80 && coffer_is_cjk(decode(text + at, end - at, &width));
    while (at < end) {
        if (text[at] < 0x80) {
            if (cjk) break;
            at++;
            continue;
        }
        if (coffer_is_cjk(decode(text + at, end - at, &width)) != cjk) break;
        at += width;
    }
    cursor->offset = at;
    if (cjk) {
        cursor->run_next = start;
        cursor->run_end = at;
        return SQLITE_OK;
    }
    sqlite3_tokenizer *inner = ((PinyinTokenizer *)cursor->base.pTokenizer)->inner;
    int rc = inner->pModule->xOpen(inner, (const char *)text + start, at - start, &cursor->inner);
    if (rc != SQLITE_OK) return rc;
    cursor->inner->pTokenizer = inner;
    cursor->inner_base = start;
    return SQLITE_OK;
}

/// Fills the pending tokens of the character at cursor->run_next and moves past it.
static void read_character(PinyinCursor *cursor) {
    const unsigned char *text = cursor->input;
    int at = cursor->run_next, width;
    unsigned c = decode(text + at, cursor->run_end - at, &width);
    cursor->character_start = at;
    cursor->character_end = at + width;
    cursor->character_position = cursor->position++;
    cursor->run_next = at + width;
    int count = 0;
    unsigned folded = ((PinyinTokenizer *)cursor->base.pTokenizer)->fold ? simplified(c) : c;
    if (folded == c) {
        cursor->pending[count] = (const char *)text + at;
        cursor->pending_bytes[count++] = width;
    } else {
        cursor->pending[count] = (const char *)cursor->folded;
        cursor->pending_bytes[count++] = encode(folded, cursor->folded);
    }
    if (!cursor->query) {
        const unsigned short *set = coffer_pinyin_sets + reading_set(c);
        unsigned initials = 0, whole = 0;  // bit per letter: initials to give, one-letter syllables given
        for (int i = 1; i <= set[0] && count < MAX_CHARACTER_TOKENS; i++) {
            const char *syllable = coffer_pinyin_syllable_text + coffer_pinyin_syllable_offsets[set[i]];
            int bytes = (int)strlen(syllable);
            cursor->pending[count] = syllable;
            cursor->pending_bytes[count++] = bytes;
            unsigned bit = 1u << (syllable[0] - 'a');
            if (bytes == 1) whole |= bit;
            initials |= bit;
        }
        initials &= ~whole;
        for (int letter = 0; letter < 26 && count < MAX_CHARACTER_TOKENS; letter++) {
            if (!(initials & (1u << letter))) continue;
            cursor->pending[count] = letters + letter;
            cursor->pending_bytes[count++] = 1;
        }
    }
    cursor->pending_count = count;
    cursor->pending_next = 0;
}

static int pinyin_next(sqlite3_tokenizer_cursor *base, const char **token, int *bytes, int *start, int *end,
                       int *position) {
    PinyinCursor *cursor = (PinyinCursor *)base;
    for (;;) {
        if (cursor->pending_next < cursor->pending_count) {
            int i = cursor->pending_next++;
            *token = cursor->pending[i];
            *bytes = cursor->pending_bytes[i];
            *start = cursor->character_start;
            *end = cursor->character_end;
            *position = cursor->character_position;
            return SQLITE_OK;
        }
        if (cursor->inner != NULL) {
            int rc = cursor->inner->pTokenizer->pModule->xNext(cursor->inner, token, bytes, start, end, position);
            if (rc == SQLITE_OK) {
                *start += cursor->inner_base;
                *end += cursor->inner_base;
                *position = cursor->position++;
                return SQLITE_OK;
            }
            close_inner(cursor);
            if (rc != SQLITE_DONE) return rc;
        }
        if (cursor->run_next < cursor->run_end) {
            read_character(cursor);
            continue;
        }
        int rc = start_segment(cursor);
        if (rc != SQLITE_OK) return rc;
    }
}

const sqlite3_tokenizer_module coffer_pinyin_tokenizer_module = {
    0, pinyin_create, pinyin_destroy, pinyin_open, pinyin_close, pinyin_next, NULL,
};
