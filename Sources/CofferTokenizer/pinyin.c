// The `coffer_pinyin` FTS3/FTS4 tokenizer: Chinese text found by its characters and by pinyin, full or
// by initials, for contact and title search.
//
// Document text, tokens in order:
// - Each CJK character (see coffer_is_cjk) takes one position, where the tokenizer gives several tokens,
//   all with the character's own byte range as offsets (so highlights cover the character): the
//   character itself, folded to its simplified form (資 → 资, Unihan's kSimplifiedVariant; `"fold=0"`
//   turns this off); every toneless reading of the character (单 → dan, shan, chan; ü as v: 吕 → lv);
//   the first letter of each reading (d, s, c), once each; and, marked with COFFER_PINYIN_PREFIX_MARK
//   (byte 0x02), the retroflex initial of each reading starting with zh, ch or sh (\x02zh, \x02ch,
//   \x02sh: what a query's initials `zh`, `ch`, `sh` and prefixes `zh*`, `ch*`, `sh*` search for, as one
//   term that FTS4 reads incrementally rather than a merge of the 20 or so syllables with that prefix).
//   FTS4 keeps a term's positions per term, so several terms at one position are allowed; a phrase's
//   i-th token matches any of them.
// - Text between CJK runs goes to a `unicode61` cursor, as in the `coffer` tokenizer, one position per
//   token; a word starting with zh, ch or sh also gives those two letters, marked, at its position.
//
// Other two-letter prefixes (`li*`, `yu*`) are not marked terms: each would cost a doclist entry per
// character (about 3 bytes, the index 5.1x the names instead of 3.9x on the contacts benchmark), while
// FTS4's merge of their few syllables' terms costs less than the queries of initials do anyway.
//
// Query text: FTS tokenizes each phrase of a MATCH expression with the table's tokenizer and ignores the
// positions it reports, so a query must give exactly one token per position. A phrase that starts with
// COFFER_PINYIN_QUERY_MARK (byte 0x01) is read that way: each CJK character gives only its folded self,
// other text goes to unicode61, except COFFER_PINYIN_PREFIX_MARK and the letters after it, one marked
// prefix term. Coffer's pinyin patterns (FullTextPattern.pinyin) split what the user typed into
// syllables and initials and write phrases such as "\x01zhang s", "\x01zhang \x02sa" (for
// `zhangsa`), "\x01\x02zh s" (for `zhs`) or "\x01中 guo".
//
// The data (readings and folding) is Tools/pinyin/generate-pinyin-table.py's output, from Unihan.

#include "CofferPinyin.h"
#include "CofferTokenizer.h"
#include "fts3_interface.h"
#include "pinyin_table.h"
#include "segments.h"
#include "utf8.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/// The most readings of one character in the table.
#define MAX_READINGS 8

/// The most tokens one character gives: itself, its readings, their initials and their marked prefixes.
#define MAX_CHARACTER_TOKENS 32

typedef struct PinyinTokenizer {
    sqlite3_tokenizer base;
    sqlite3_tokenizer *inner;  // unicode61, for the text between CJK runs
    int fold;                  // fold traditional characters to simplified ones
} PinyinTokenizer;

typedef struct PinyinCursor {
    sqlite3_tokenizer_cursor base;
    CofferSegments segments;
    int query;  // the input started with COFFER_PINYIN_QUERY_MARK
    // The tokens still to give for the current character, all at `character_position`.
    const char *pending[MAX_CHARACTER_TOKENS];
    int pending_bytes[MAX_CHARACTER_TOKENS];
    int pending_count, pending_next;
    int character_start, character_end, character_position;
    unsigned char folded[4];
    char prefixes[MAX_READINGS][3];  // the character's marked two-letter prefixes
} PinyinCursor;

static const char letters[] = "abcdefghijklmnopqrstuvwxyz";

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
    coffer_segments_init(&cursor->segments, input, length);
    if (cursor->segments.length > 0 && input[0] == COFFER_PINYIN_QUERY_MARK) {
        cursor->query = 1;
        cursor->segments.offset = 1;
        cursor->segments.stop = COFFER_PINYIN_PREFIX_MARK;
    }
    *out = &cursor->base;
    return SQLITE_OK;
}

static int pinyin_close(sqlite3_tokenizer_cursor *base) {
    PinyinCursor *cursor = (PinyinCursor *)base;
    coffer_segments_close_inner(&cursor->segments);
    free(cursor);
    return SQLITE_OK;
}

/// In a query, COFFER_PINYIN_PREFIX_MARK and the lowercase letters after it: one token, as the index
/// holds it (the mark and the letters), at the next position. Nothing when no letter follows.
static void read_marked_prefix(PinyinCursor *cursor) {
    CofferSegments *segments = &cursor->segments;
    const unsigned char *text = segments->input;
    int at = segments->offset, stop = at + 1;
    while (stop < segments->length && text[stop] >= 'a' && text[stop] <= 'z') stop++;
    segments->offset = stop;
    if (stop - at < 2) return;
    cursor->pending[0] = (const char *)text + at;
    cursor->pending_bytes[0] = stop - at;
    cursor->pending_count = 1;
    cursor->pending_next = 0;
    cursor->character_start = at;
    cursor->character_end = stop;
    cursor->character_position = segments->position++;
}

/// Whether `first` and `second` are a retroflex initial: zh, ch or sh.
static int is_retroflex(char first, char second) {
    return second == 'h' && (first == 'z' || first == 'c' || first == 's');
}

/// Fills the pending tokens of the character at cursor->run_next and moves past it.
static void read_character(PinyinCursor *cursor) {
    CofferSegments *segments = &cursor->segments;
    const unsigned char *text = segments->input;
    int at = segments->run_next, width;
    unsigned c = coffer_utf8_decode(text + at, segments->run_end - at, &width);
    cursor->character_start = at;
    cursor->character_end = at + width;
    cursor->character_position = segments->position++;
    segments->run_next = at + width;
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
        // Each reading's retroflex initial (zh, ch, sh), marked, once each: what the initial `zh` or the
        // prefix `zh*` searches for, read as one term.
        int prefix_count = 0;
        for (int i = 1; i <= set[0] && count < MAX_CHARACTER_TOKENS && prefix_count < MAX_READINGS; i++) {
            const char *syllable = coffer_pinyin_syllable_text + coffer_pinyin_syllable_offsets[set[i]];
            if (!is_retroflex(syllable[0], syllable[1])) continue;
            int seen = 0;
            for (int k = 0; k < prefix_count && !seen; k++) {
                seen = cursor->prefixes[k][1] == syllable[0] && cursor->prefixes[k][2] == syllable[1];
            }
            if (seen) continue;
            char *term = cursor->prefixes[prefix_count++];
            term[0] = COFFER_PINYIN_PREFIX_MARK;
            term[1] = syllable[0];
            term[2] = syllable[1];
            cursor->pending[count] = term;
            cursor->pending_bytes[count++] = 3;
        }
    }
    cursor->pending_count = count;
    cursor->pending_next = 0;
}

/// In a document, a word starting with zh, ch or sh (a nickname: `zhuzhu`) also gives those two letters,
/// marked, at its position: a marked prefix in a query (`\x02zh`, what `zh` typed last searches for)
/// finds it as `zh*` would.
static void mark_word_prefix(PinyinCursor *cursor, const char *token, int bytes, int start, int end, int position) {
    if (bytes < 2 || !is_retroflex(token[0], token[1])) return;
    char *term = cursor->prefixes[0];
    term[0] = COFFER_PINYIN_PREFIX_MARK;
    term[1] = token[0];
    term[2] = token[1];
    cursor->pending[0] = term;
    cursor->pending_bytes[0] = 3;
    cursor->pending_count = 1;
    cursor->pending_next = 0;
    cursor->character_start = start;
    cursor->character_end = end;
    cursor->character_position = position;
}

static int pinyin_next(sqlite3_tokenizer_cursor *base, const char **token, int *bytes, int *start, int *end,
                       int *position) {
    PinyinCursor *cursor = (PinyinCursor *)base;
    CofferSegments *segments = &cursor->segments;
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
        if (segments->inner != NULL) {
            int rc = coffer_segments_next_inner(segments, token, bytes, start, end, position);
            if (rc == SQLITE_OK && !cursor->query) mark_word_prefix(cursor, *token, *bytes, *start, *end, *position);
            if (rc != SQLITE_DONE) return rc;
        }
        if (segments->run_next < segments->run_end) {
            read_character(cursor);
            continue;
        }
        if (segments->stop != 0 && segments->offset < segments->length
            && segments->input[segments->offset] == segments->stop) {
            read_marked_prefix(cursor);
            continue;
        }
        int rc = coffer_segments_start(segments, ((PinyinTokenizer *)cursor->base.pTokenizer)->inner);
        if (rc != SQLITE_OK) return rc;
    }
}

const sqlite3_tokenizer_module coffer_pinyin_tokenizer_module = {
    0, pinyin_create, pinyin_destroy, pinyin_open, pinyin_close, pinyin_next, NULL,
};
