// Coffer's only view of SQLCipher: the codec functions (sqlite3_key, sqlite3_rekey)
// are declared only when SQLITE_HAS_CODEC is defined before the header is read.
#define SQLITE_HAS_CODEC 1
#include <sqlcipher/sqlite3.h>
