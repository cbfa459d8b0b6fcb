// Coffer's tokenizers for FTS5, on a SQLite that has it (SQLCipher 4's builds; SQLite 3.20 or later, for
// `sqlite3_bind_pointer`, the only safe way to reach the fts5_api).
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

#if SQLITE_VERSION_NUMBER >= 3020000

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
    return SQLITE_OK;
}

#else

int coffer_fts5_register(struct sqlite3 *db) {
    (void)db;
    return SQLITE_OK;
}

#endif
