// Coffer's full-text search support in C: the CJK-aware FTS3/FTS4 tokenizer `coffer` and the `coffer_bm25`
// ranking function, registered on a connection by one call.
#ifndef COFFER_TOKENIZER_H
#define COFFER_TOKENIZER_H

struct sqlite3;

/// The tokenizer's name in `CREATE VIRTUAL TABLE … USING fts4(…, tokenize=coffer)`.
#define COFFER_TOKENIZER_NAME "coffer"

/// The BM25 function's name: `coffer_bm25(matchinfo(t, 'pcnalx') [, weight per column…])`.
#define COFFER_BM25_FUNCTION_NAME "coffer_bm25"

/// Registers the `coffer` tokenizer and the `coffer_bm25` function on `db` (an open SQLCipher
/// connection). `fts3_tokenizer()`'s two-argument form is enabled only around this function's own
/// statement, which binds the module pointer, and is disabled again before it returns, whatever happened.
/// Returns an SQLite result code.
int coffer_fts_register(struct sqlite3 *db);

/// Registers the `coffer`, `coffer_pinyin` and `coffer_identifier` tokenizers with FTS5 on `db`, after
/// `coffer_fts_register` (they wrap its FTS3 modules), when the linked SQLite has FTS5; does nothing on one
/// without it (SQLCipher 3.4.1). Returns an SQLite result code.
int coffer_fts5_register(struct sqlite3 *db);

/// Turns the connection's triggers on (1) or off (0), or leaves them (-1) (SQLITE_DBCONFIG_ENABLE_TRIGGER, a
/// variadic call Swift cannot make); returns the setting now in force (1 or 0), or -1 on failure. Statements compiled before are
/// re-prepared at their next step. `insertAll` writes a batch of content rows with them off, then indexes
/// the rows itself: a table with a trigger makes SQLite open a statement journal for each INSERT, and
/// SQLCipher encrypts every page image written to it.
int coffer_fts_set_triggers(struct sqlite3 *db, int enabled);

/// 1 when the code point `c` is one the tokenizer indexes as character pairs (Han, Hiragana, Katakana,
/// Hangul), else 0.
int coffer_is_cjk(unsigned c);

/// The number of tokens the `coffer` tokenizer (default options) makes of `text` (`bytes` bytes of UTF-8),
/// or -1 when it cannot run (no connection registered it yet, or out of memory).
int coffer_fts_count_tokens(const char *text, int bytes);

#endif
