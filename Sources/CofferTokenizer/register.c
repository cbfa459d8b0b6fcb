// Registration of the `coffer`, `coffer_pinyin` and `coffer_identifier` tokenizers and `coffer_bm25` on
// one connection.
//
// SQLite 3.15 takes a custom FTS3/4 tokenizer only through `SELECT fts3_tokenizer(name, pointer)`, and
// that two-argument form would let any SQL that reaches it (a query, a trigger or view in a hostile
// file's schema) install a pointer of its choosing as code. It is disabled by default
// (SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER); this file enables it only while its own statement, whose
// pointer is bound, runs, and disables it again on every path.

#include "CofferPinyin.h"
#include "CofferTokenizer.h"
#include "fts3_interface.h"

#include <string.h>

/// unicode61's module, through fts3_tokenizer()'s one-argument form (allowed while the flag is off). The
/// name is bound: SQLite 3.26 and later (SQLCipher 4) return the pointer, with the flag off, only for a
/// bound name (a literal gets NULL); 3.15 returns it either way.
static int find_unicode61(sqlite3 *db) {
    if (atomic_load(&coffer_unicode61_module) != NULL) return SQLITE_OK;
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT fts3_tokenizer(?1)", -1, &statement, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(statement, 1, "unicode61", -1, SQLITE_STATIC);
        rc = sqlite3_step(statement);
        const sqlite3_tokenizer_module *module = NULL;
        if (rc == SQLITE_ROW && sqlite3_column_bytes(statement, 0) == (int)sizeof(module)) {
            memcpy(&module, sqlite3_column_blob(statement, 0), sizeof(module));
            atomic_store(&coffer_unicode61_module, module);
            rc = SQLITE_OK;
        } else if (rc == SQLITE_ROW || rc == SQLITE_DONE) {
            rc = SQLITE_ERROR;
        }
    }
    sqlite3_finalize(statement);
    return rc;
}

static int register_tokenizer(sqlite3 *db, const char *name, const sqlite3_tokenizer_module *module) {
    sqlite3_stmt *statement = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT fts3_tokenizer(?1, ?2)", -1, &statement, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_text(statement, 1, name, -1, SQLITE_STATIC);
        sqlite3_bind_blob(statement, 2, &module, sizeof(module), SQLITE_TRANSIENT);
        rc = sqlite3_step(statement);
        if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
    }
    sqlite3_finalize(statement);
    return rc;
}

int coffer_fts_register(struct sqlite3 *db) {
    int rc = find_unicode61(db);
    if (rc != SQLITE_OK) return rc;
    int enabled = 0;
    rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 1, &enabled);
    if (rc == SQLITE_OK && enabled == 1) rc = register_tokenizer(db, COFFER_TOKENIZER_NAME, &coffer_tokenizer_module);
    if (rc == SQLITE_OK && enabled == 1)
        rc = register_tokenizer(db, COFFER_PINYIN_TOKENIZER_NAME, &coffer_pinyin_tokenizer_module);
    if (rc == SQLITE_OK && enabled == 1)
        rc = register_tokenizer(db, COFFER_IDENTIFIER_TOKENIZER_NAME, &coffer_identifier_tokenizer_module);
    else if (rc == SQLITE_OK) rc = SQLITE_ERROR;
    int disabled = 1;
    int off = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, &disabled);
    if (rc == SQLITE_OK && (off != SQLITE_OK || disabled != 0)) rc = SQLITE_ERROR;
    if (rc != SQLITE_OK) return rc;
    return sqlite3_create_function_v2(db, COFFER_BM25_FUNCTION_NAME, -1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
                                      coffer_bm25, NULL, NULL, NULL);
}

int coffer_fts_set_triggers(struct sqlite3 *db, int enabled) {
    int now = -1;
    int rc = sqlite3_db_config(db, SQLITE_DBCONFIG_ENABLE_TRIGGER, enabled, &now);
    return rc == SQLITE_OK ? now : -1;
}
