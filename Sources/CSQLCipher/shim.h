// Coffer's only view of SQLCipher: the codec functions (sqlite3_key, sqlite3_rekey)
// are declared only when SQLITE_HAS_CODEC is defined before the header is read.
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>

// sqlite3_config is variadic, which Swift cannot call: one wrapper per option set from Swift.
// SQLITE_CONFIG_MEMSTATUS: whether every allocation updates SQLite's global memory statistics under a
// global mutex. Process-wide; takes effect only before SQLite initializes (SQLITE_MISUSE after).
static inline int coffer_sqlite3_config_memstatus(int enabled) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, enabled);
}
