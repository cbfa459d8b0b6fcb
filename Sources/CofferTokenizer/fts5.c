// Coffer's tokenizers for FTS5, on a SQLite that has it (SQLCipher 4's builds; SQLite 3.25 or later: 3.20's
// `sqlite3_bind_pointer`, the only safe way to reach the fts5_api, and 3.25's `sqlite3_str`).
//
// One adapter serves the three FTS3 tokenizer modules (`coffer`, `coffer_pinyin`, `coffer_identifier`):
// FTS5's xTokenize opens the module's cursor on the text and passes each token on. A token at the same
// position as the one before it (the pinyin tokenizer gives a character's readings, initials and prefixes
// at the character's position) goes to FTS5 as FTS5_TOKEN_COLOCATED, FTS5's way of indexing synonyms at
// one position. Query text runs through the same cursor, so the pinyin tokenizer's query mark (0x01 at the
// start of a phrase) works in FTS5 MATCH strings as in FTS4's.

#include "CofferPinyin.h"
#include "CofferTokenizer.h"
#include "fts3_interface.h"

#include <stdlib.h>

#if SQLITE_VERSION_NUMBER >= 3025000

typedef struct CofferFTS5Tokenizer {
    const sqlite3_tokenizer_module *module;
    sqlite3_tokenizer *tokenizer;
} CofferFTS5Tokenizer;

static int adapter_create(void *context, const char **arguments, int count, Fts5Tokenizer **out) {
    const sqlite3_tokenizer_module *module = context;
    CofferFTS5Tokenizer *adapter = sqlite3_malloc(sizeof(*adapter));
    if (adapter == NULL) return SQLITE_NOMEM;
    adapter->module = module;
    adapter->tokenizer = NULL;
    int rc = module->xCreate(count, (const char *const *)arguments, &adapter->tokenizer);
    if (rc != SQLITE_OK) {
        sqlite3_free(adapter);
        return rc;
    }
    adapter->tokenizer->pModule = module;
    *out = (Fts5Tokenizer *)adapter;
    return SQLITE_OK;
}

static void adapter_delete(Fts5Tokenizer *tokenizer) {
    CofferFTS5Tokenizer *adapter = (CofferFTS5Tokenizer *)tokenizer;
    if (adapter == NULL) return;
    adapter->module->xDestroy(adapter->tokenizer);
    sqlite3_free(adapter);
}

static int adapter_tokenize(Fts5Tokenizer *tokenizer, void *context, int flags, const char *text, int bytes,
                            int (*emit)(void *, int, const char *, int, int, int)) {
    (void)flags;
    CofferFTS5Tokenizer *adapter = (CofferFTS5Tokenizer *)tokenizer;
    sqlite3_tokenizer_cursor *cursor = NULL;
    int rc = adapter->module->xOpen(adapter->tokenizer, text, bytes, &cursor);
    if (rc != SQLITE_OK) return rc;
    cursor->pTokenizer = adapter->tokenizer;
    int previous = -1;
    for (;;) {
        const char *token = NULL;
        int token_bytes = 0, start = 0, end = 0, position = 0;
        rc = adapter->module->xNext(cursor, &token, &token_bytes, &start, &end, &position);
        if (rc != SQLITE_OK) break;
        int token_flags = (previous >= 0 && position == previous) ? FTS5_TOKEN_COLOCATED : 0;
        previous = position;
        rc = emit(context, token_flags, token, token_bytes, start, end);
        if (rc != SQLITE_OK) break;
    }
    adapter->module->xClose(cursor);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/// The connection's fts5_api, or NULL when its SQLite has no FTS5.
static fts5_api *fts5_api_of(sqlite3 *db) {
    fts5_api *api = NULL;
    sqlite3_stmt *statement = NULL;
    if (sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &statement, NULL) == SQLITE_OK) {
        sqlite3_bind_pointer(statement, 1, (void *)&api, "fts5_api_ptr", NULL);
        sqlite3_step(statement);
    }
    sqlite3_finalize(statement);
    return api;
}

/// Byte ranges of a column's token positions, filled by xTokenize (a colocated token keeps its position's
/// first range).
typedef struct CofferPositions {
    int count;
    int capacity;
    int *ranges;  // start, end of position i at 2i, 2i+1
} CofferPositions;

static int record_position(void *context, int flags, const char *token, int bytes, int start, int end) {
    (void)token;
    (void)bytes;
    CofferPositions *positions = context;
    if (flags & FTS5_TOKEN_COLOCATED) return SQLITE_OK;
    if (positions->count == positions->capacity) {
        int capacity = positions->capacity ? positions->capacity * 2 : 64;
        int *ranges = sqlite3_realloc64(positions->ranges, sizeof(int) * 2 * (sqlite3_uint64)capacity);
        if (ranges == NULL) return SQLITE_NOMEM;
        positions->ranges = ranges;
        positions->capacity = capacity;
    }
    positions->ranges[2 * positions->count] = start;
    positions->ranges[2 * positions->count + 1] = end;
    positions->count++;
    return SQLITE_OK;
}

/// `coffer_offsets(<fts5 table>)`: FTS4's `offsets()` text for an FTS5 match — "column term byte-offset
/// byte-length" for every query token of every phrase hit, space-separated. FTS5 reports a phrase hit as
/// its first token's position; each of the phrase's tokens is reported at the byte range the tokenizer gave
/// the column's token at that position, and query tokens are numbered across phrases, left to right, as
/// FTS4 numbers its terms (FullTextHighlight reads either the same way).
static void offsets_function(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *context, int count,
                             sqlite3_value **values) {
    (void)count;
    (void)values;
    int instances = 0;
    int rc = api->xInstCount(fts, &instances);
    if (rc != SQLITE_OK) {
        sqlite3_result_error_code(context, rc);
        return;
    }
    int phrases = api->xPhraseCount(fts);
    int *first_term = sqlite3_malloc64(sizeof(int) * ((sqlite3_uint64)phrases + 1));
    sqlite3_str *out = sqlite3_str_new(NULL);
    CofferPositions positions = {0, 0, NULL};
    if (first_term == NULL || out == NULL) rc = SQLITE_NOMEM;
    if (first_term != NULL) first_term[0] = 0;
    for (int phrase = 0; rc == SQLITE_OK && phrase < phrases; phrase++) {
        first_term[phrase + 1] = first_term[phrase] + api->xPhraseSize(fts, phrase);
    }
    int columns = api->xColumnCount(fts);
    for (int column = 0; rc == SQLITE_OK && column < columns; column++) {
        int tokenized = 0;
        for (int index = 0; rc == SQLITE_OK && index < instances; index++) {
            int phrase = 0, hit_column = 0, offset = 0;
            rc = api->xInst(fts, index, &phrase, &hit_column, &offset);
            if (rc != SQLITE_OK || hit_column != column) continue;
            if (!tokenized) {
                const char *text = NULL;
                int bytes = 0;
                positions.count = 0;
                rc = api->xColumnText(fts, column, &text, &bytes);
                if (rc == SQLITE_OK && text != NULL) rc = api->xTokenize(fts, text, bytes, &positions, record_position);
                if (rc != SQLITE_OK) break;
                tokenized = 1;
            }
            int size = api->xPhraseSize(fts, phrase);
            for (int token = 0; token < size && offset + token < positions.count; token++) {
                int start = positions.ranges[2 * (offset + token)];
                int end = positions.ranges[2 * (offset + token) + 1];
                sqlite3_str_appendf(out, "%s%d %d %d %d", sqlite3_str_length(out) ? " " : "", column,
                                    first_term[phrase] + token, start, end - start);
            }
        }
    }
    sqlite3_free(positions.ranges);
    sqlite3_free(first_term);
    if (rc == SQLITE_OK && out != NULL) rc = sqlite3_str_errcode(out);
    // sqlite3_str_finish gives NULL for an empty string as well as on error: the error code was read first.
    char *text = out != NULL ? sqlite3_str_finish(out) : NULL;
    if (rc != SQLITE_OK) {
        sqlite3_free(text);
        sqlite3_result_error_code(context, rc);
        return;
    }
    if (text == NULL) {
        sqlite3_result_text(context, "", 0, SQLITE_STATIC);
        return;
    }
    sqlite3_result_text(context, text, -1, sqlite3_free);
}

int coffer_fts5_register(struct sqlite3 *db) {
    fts5_api *api = fts5_api_of(db);
    if (api == NULL) return SQLITE_OK;  // no FTS5: nothing to register
    static const struct {
        const char *name;
        const sqlite3_tokenizer_module *module;
    } tokenizers[] = {
        {COFFER_TOKENIZER_NAME, &coffer_tokenizer_module},
        {COFFER_PINYIN_TOKENIZER_NAME, &coffer_pinyin_tokenizer_module},
        {COFFER_IDENTIFIER_TOKENIZER_NAME, &coffer_identifier_tokenizer_module},
    };
    fts5_tokenizer methods = {adapter_create, adapter_delete, adapter_tokenize};
    for (size_t i = 0; i < sizeof(tokenizers) / sizeof(tokenizers[0]); i++) {
        int rc = api->xCreateTokenizer(api, tokenizers[i].name, (void *)tokenizers[i].module, &methods, NULL);
        if (rc != SQLITE_OK) return rc;
    }
    return api->xCreateFunction(api, "coffer_offsets", NULL, offsets_function, NULL);
}

#else

int coffer_fts5_register(struct sqlite3 *db) {
    (void)db;
    return SQLITE_OK;
}

#endif
