// SQLite's FTS3 tokenizer interface, as its documentation states it (Debian installs no
// fts3_tokenizer.h). The order of the fields is the library's ABI; version 0 has no xLanguageid.
#ifndef COFFER_FTS3_INTERFACE_H
#define COFFER_FTS3_INTERFACE_H

#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>

#include <stdatomic.h>

typedef struct sqlite3_tokenizer_module sqlite3_tokenizer_module;
typedef struct sqlite3_tokenizer sqlite3_tokenizer;
typedef struct sqlite3_tokenizer_cursor sqlite3_tokenizer_cursor;

struct sqlite3_tokenizer_module {
    int iVersion;
    int (*xCreate)(int argc, const char *const *argv, sqlite3_tokenizer **ppTokenizer);
    int (*xDestroy)(sqlite3_tokenizer *pTokenizer);
    int (*xOpen)(sqlite3_tokenizer *pTokenizer, const char *pInput, int nBytes, sqlite3_tokenizer_cursor **ppCursor);
    int (*xClose)(sqlite3_tokenizer_cursor *pCursor);
    int (*xNext)(sqlite3_tokenizer_cursor *pCursor, const char **ppToken, int *pnBytes, int *piStartOffset,
                 int *piEndOffset, int *piPosition);
    int (*xLanguageid)(sqlite3_tokenizer_cursor *pCsr, int iLangid);
};

/// Every tokenizer instance starts with this; FTS sets pModule after xCreate.
struct sqlite3_tokenizer {
    const sqlite3_tokenizer_module *pModule;
};

/// Every cursor starts with this; FTS sets pTokenizer after xOpen.
struct sqlite3_tokenizer_cursor {
    sqlite3_tokenizer *pTokenizer;
};

extern const sqlite3_tokenizer_module coffer_tokenizer_module;
extern const sqlite3_tokenizer_module coffer_pinyin_tokenizer_module;
extern const sqlite3_tokenizer_module coffer_identifier_tokenizer_module;
extern _Atomic(const sqlite3_tokenizer_module *) coffer_unicode61_module;

void coffer_bm25(sqlite3_context *context, int argc, sqlite3_value **argv);

#endif
