// The `coffer_identifier` FTS3/FTS4 tokenizer, for phone numbers, e-mail addresses, order numbers and
// user ids: any run of three or more of their characters finds the row, separators ignored
// (`1380013` finds `+86 138 0013 8000`, `doe@exa` finds `john.doe@example.com`).
//
// Tokens: the text's letters and digits (ASCII letters lowercased; every non-ASCII character counts
// except spaces, punctuation and symbols of the common blocks, see is_kept) in order, with everything
// else dropped, give one token per trigram: the characters k, k+1, k+2 at position k, with the byte range
// from the first one's start to the third one's end (so highlights cover the separators inside a match).
// Text of one or two kept characters is one token of them.
//
// A query goes through the same tokenizer: the phrase "1380013" is the trigrams 138 380 800 001 013 at
// consecutive positions, which is where they are in every document holding that run. A phrase of one or
// two characters finds documents of exactly those characters, or, as a prefix (`86*`), every trigram
// starting with them.

#include "CofferPinyin.h"
#include "CofferTokenizer.h"
#include "fts3_interface.h"
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

typedef struct IdentifierCursor {
    sqlite3_tokenizer_cursor base;
    const unsigned char *input;
    int length;
    int offset;    // where reading continues
    int position;  // the next token's position
    int short_text;  // fewer than three kept characters: one token of them all
    // The last three kept characters: byte range in the input, and lowercased bytes.
    int starts[3], ends[3];
    unsigned char bytes[3][4];
    int widths[3];
    int have;  // kept characters in the window (0…3)
    unsigned char token[12];
} IdentifierCursor;

/// ASCII letters and digits; other characters except Latin-1's controls and punctuation, the general
/// punctuation, CJK symbols and full-width punctuation blocks, and U+FFFD (invalid UTF-8).
static int is_kept(unsigned c) {
    if (c < 0x80) return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (c < 0xC0) return 0;
    if (c == 0xD7 || c == 0xF7) return 0;
    if (c >= 0x2000 && c <= 0x2BFF) return 0;  // punctuation, symbols, arrows, box drawing…
    if (c >= 0x3000 && c <= 0x303F) return 0;  // CJK symbols and punctuation
    if (c >= 0xFE10 && c <= 0xFE6F) return 0;  // vertical, compatibility and small forms
    if (c >= 0xFF00 && c <= 0xFF0F) return 0;  // full-width punctuation
    if (c >= 0xFF1A && c <= 0xFF20) return 0;
    if (c >= 0xFF3B && c <= 0xFF40) return 0;
    if (c >= 0xFF5B && c <= 0xFF65) return 0;
    if (c >= 0xFFF0 && c <= 0xFFFF) return 0;  // specials, U+FFFD
    if (c >= 0x1F000 && c <= 0x1FAFF) return 0;  // emoji and pictographs
    return 1;
}

static int identifier_create(int argc, const char *const *argv, sqlite3_tokenizer **out) {
    (void)argc;
    (void)argv;
    sqlite3_tokenizer *tokenizer = calloc(1, sizeof(sqlite3_tokenizer));
    if (tokenizer == NULL) return SQLITE_NOMEM;
    *out = tokenizer;
    return SQLITE_OK;
}

static int identifier_destroy(sqlite3_tokenizer *tokenizer) {
    free(tokenizer);
    return SQLITE_OK;
}

/// Reads the next kept character from cursor->offset into the window's last slot; 0 at the end.
static int read_kept(IdentifierCursor *cursor) {
    const unsigned char *text = cursor->input;
    while (cursor->offset < cursor->length) {
        int at = cursor->offset, width;
        unsigned c = coffer_utf8_decode(text + at, cursor->length - at, &width);
        cursor->offset = at + width;
        if (!is_kept(c)) continue;
        if (cursor->have == 3) {
            memmove(cursor->starts, cursor->starts + 1, 2 * sizeof(int));
            memmove(cursor->ends, cursor->ends + 1, 2 * sizeof(int));
            memmove(cursor->widths, cursor->widths + 1, 2 * sizeof(int));
            memmove(cursor->bytes, cursor->bytes + 1, 2 * sizeof(cursor->bytes[0]));
            cursor->have = 2;
        }
        int slot = cursor->have++;
        cursor->starts[slot] = at;
        cursor->ends[slot] = at + width;
        cursor->widths[slot] = width;
        memcpy(cursor->bytes[slot], text + at, (size_t)width);
        if (width == 1 && c >= 'A' && c <= 'Z') cursor->bytes[slot][0] = (unsigned char)(c + 32);
        return 1;
    }
    return 0;
}

static int identifier_open(sqlite3_tokenizer *base, const char *input, int length, sqlite3_tokenizer_cursor **out) {
    (void)base;
    IdentifierCursor *cursor = calloc(1, sizeof(IdentifierCursor));
    if (cursor == NULL) return SQLITE_NOMEM;
    if (input == NULL) length = 0;
    else if (length < 0) length = (int)strlen(input);
    cursor->input = (const unsigned char *)input;
    cursor->length = length;
    // Are there three kept characters? (The count stops at three.)
    int kept = 0;
    for (int at = 0, width; at < length && kept < 3; at += width) {
        if (is_kept(coffer_utf8_decode(cursor->input + at, length - at, &width))) kept++;
    }
    cursor->short_text = kept < 3;
    *out = &cursor->base;
    return SQLITE_OK;
}

static int identifier_close(sqlite3_tokenizer_cursor *base) {
    free(base);
    return SQLITE_OK;
}

static int identifier_next(sqlite3_tokenizer_cursor *base, const char **token, int *bytes, int *start, int *end,
                           int *position) {
    IdentifierCursor *cursor = (IdentifierCursor *)base;
    if (cursor->short_text) {
        while (read_kept(cursor)) {}
        if (cursor->have == 0 || cursor->position > 0) return SQLITE_DONE;
    } else {
        while (cursor->have < 3 || cursor->position > 0) {
            if (!read_kept(cursor)) return SQLITE_DONE;
            if (cursor->have == 3) break;
        }
    }
    int length = 0;
    for (int i = 0; i < cursor->have; i++) {
        memcpy(cursor->token + length, cursor->bytes[i], (size_t)cursor->widths[i]);
        length += cursor->widths[i];
    }
    *token = (const char *)cursor->token;
    *bytes = length;
    *start = cursor->starts[0];
    *end = cursor->ends[cursor->have - 1];
    *position = cursor->position++;
    return SQLITE_OK;
}

const sqlite3_tokenizer_module coffer_identifier_tokenizer_module = {
    0, identifier_create, identifier_destroy, identifier_open, identifier_close, identifier_next, NULL,
};
