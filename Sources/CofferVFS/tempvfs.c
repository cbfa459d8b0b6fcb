// See include/CofferVFS.h ("coffer-encrypted-temp"). Includes SQLCipher's header, never the system SQLite's.
#include "CofferVFS.h"

#include <sqlcipher/sqlite3.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <pthread.h>
#include <string.h>

#define TEMPORARY_FLAGS \
    (SQLITE_OPEN_TEMP_DB | SQLITE_OPEN_TEMP_JOURNAL | SQLITE_OPEN_TRANSIENT_DB | SQLITE_OPEN_SUBJOURNAL)

// An encrypted temporary file; the wrapped file's own structure follows it in the same allocation.
typedef struct TempFile {
    sqlite3_file base;
    sqlite3_file *real;
    unsigned char key[32];
    unsigned char nonce[8];
    // Keyed once when the file opens; each read or write only sets the counter block (OpenSSL 3 makes
    // a context's allocation, algorithm fetch and key schedule cost more than a page's AES-CTR).
    EVP_CIPHER_CTX *context;
} TempFile;

static sqlite3_vfs *inner_vfs;
static sqlite3_vfs temp_vfs;
static sqlite3_io_methods temp_methods;
static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_ERROR;

// Writes `in` XOR the key stream at file offset `offset` to `out` (they may be the same buffer).
// AES-256-CTR: the counter block is nonce (8 bytes) followed by offset / 16 as a big-endian 64-bit
// integer, and the stream starts offset % 16 bytes into that block. Returns SQLITE_OK or an error.
static int apply_key_stream(const TempFile *file, unsigned char *out, const unsigned char *in, int count,
                            sqlite3_int64 offset) {
    unsigned char counter[16];
    memcpy(counter, file->nonce, 8);
    unsigned long long block = (unsigned long long)offset / 16;
    for (int i = 0; i < 8; i++) counter[15 - i] = (unsigned char)(block >> (8 * i));
    // A new counter block restarts the stream; the key schedule stays.
    int ok = EVP_EncryptInit_ex(file->context, NULL, NULL, NULL, counter);
    int length = 0;
    int skip = (int)(offset % 16);
    if (ok && skip > 0) {
        unsigned char discard[16] = {0};
        ok = EVP_EncryptUpdate(file->context, discard, &length, discard, skip);
    }
    if (ok && count > 0) ok = EVP_EncryptUpdate(file->context, out, &length, in, count);
    return ok ? SQLITE_OK : SQLITE_ERROR;
}

static int temp_close(sqlite3_file *handle) {
    TempFile *file = (TempFile *)handle;
    int rc = file->real->pMethods->xClose(file->real);
    EVP_CIPHER_CTX_free(file->context);  // wipes the key schedule
    file->context = NULL;
    OPENSSL_cleanse(file->key, sizeof file->key);
    return rc;
}

static int temp_read(sqlite3_file *handle, void *buffer, int amount, sqlite3_int64 offset) {
    TempFile *file = (TempFile *)handle;
    int rc = file->real->pMethods->xRead(file->real, buffer, amount, offset);
    if (rc == SQLITE_OK) {
        return apply_key_stream(file, buffer, buffer, amount, offset) == SQLITE_OK ? SQLITE_OK : SQLITE_IOERR_READ;
    }
    if (rc == SQLITE_IOERR_SHORT_READ) {
        // The wrapped VFS zero-filled what lies past the end: decrypt only the bytes that exist.
        sqlite3_int64 size = 0;
        if (file->real->pMethods->xFileSize(file->real, &size) != SQLITE_OK) return SQLITE_IOERR_READ;
        sqlite3_int64 present = size - offset;
        if (present > amount) present = amount;
        if (present > 0 && apply_key_stream(file, buffer, buffer, (int)present, offset) != SQLITE_OK) {
            return SQLITE_IOERR_READ;
        }
    }
    return rc;
}

static int temp_write(sqlite3_file *handle, const void *buffer, int amount, sqlite3_int64 offset) {
    TempFile *file = (TempFile *)handle;
    unsigned char stack[4096];
    unsigned char *sealed = amount <= (int)sizeof stack ? stack : sqlite3_malloc(amount);
    if (!sealed) return SQLITE_IOERR_NOMEM;
    int rc = apply_key_stream(file, sealed, buffer, amount, offset);
    rc = rc == SQLITE_OK ? file->real->pMethods->xWrite(file->real, sealed, amount, offset) : SQLITE_IOERR_WRITE;
    if (sealed != stack) sqlite3_free(sealed);
    return rc;
}

static int temp_truncate(sqlite3_file *handle, sqlite3_int64 size) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xTruncate(file->real, size);
}

static int temp_sync(sqlite3_file *handle, int flags) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xSync(file->real, flags);
}

static int temp_file_size(sqlite3_file *handle, sqlite3_int64 *size) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xFileSize(file->real, size);
}

static int temp_lock(sqlite3_file *handle, int level) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xLock(file->real, level);
}

static int temp_unlock(sqlite3_file *handle, int level) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xUnlock(file->real, level);
}

static int temp_check_reserved_lock(sqlite3_file *handle, int *result) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xCheckReservedLock(file->real, result);
}

static int temp_file_control(sqlite3_file *handle, int op, void *argument) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xFileControl(file->real, op, argument);
}

static int temp_sector_size(sqlite3_file *handle) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xSectorSize(file->real);
}

static int temp_device_characteristics(sqlite3_file *handle) {
    TempFile *file = (TempFile *)handle;
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

static int temp_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *handle, int flags, int *out_flags) {
    (void)vfs;
    if (name != NULL && (flags & TEMPORARY_FLAGS) == 0) {
        // Not temporary: the wrapped VFS opens it in place (this VFS's file size covers its structure).
        return inner_vfs->xOpen(inner_vfs, name, handle, flags, out_flags);
    }
    TempFile *file = (TempFile *)handle;
    memset(file, 0, sizeof *file);
    file->real = (sqlite3_file *)(file + 1);
    int rc = inner_vfs->xOpen(inner_vfs, name, file->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        if (file->real->pMethods) file->real->pMethods->xClose(file->real);
        return rc;
    }
    if (RAND_bytes(file->key, sizeof file->key) != 1 || RAND_bytes(file->nonce, sizeof file->nonce) != 1 ||
        (file->context = EVP_CIPHER_CTX_new()) == NULL ||
        EVP_EncryptInit_ex(file->context, EVP_aes_256_ctr(), NULL, file->key, NULL) != 1) {
        file->real->pMethods->xClose(file->real);
        EVP_CIPHER_CTX_free(file->context);
        file->context = NULL;
        OPENSSL_cleanse(file->key, sizeof file->key);
        return SQLITE_IOERR;
    }
    file->base.pMethods = &temp_methods;
    return SQLITE_OK;
}

static void register_once(void) {
    // Over "coffer", so a connection with encrypted temporary files writes its WAL the same way.
    inner_vfs = coffer_vfs_register() == SQLITE_OK ? sqlite3_vfs_find(COFFER_VFS_NAME) : sqlite3_vfs_find(NULL);
    if (!inner_vfs) return;
    temp_vfs = *inner_vfs;
    temp_vfs.pNext = NULL;
    temp_vfs.zName = COFFER_TEMP_VFS_NAME;
    temp_vfs.szOsFile = (int)sizeof(TempFile) + inner_vfs->szOsFile;
    temp_vfs.xOpen = temp_open;
    // Version 1 methods: no memory mapping, so every read of a temporary file goes through temp_read.
    temp_methods.iVersion = 1;
    temp_methods.xClose = temp_close;
    temp_methods.xRead = temp_read;
    temp_methods.xWrite = temp_write;
    temp_methods.xTruncate = temp_truncate;
    temp_methods.xSync = temp_sync;
    temp_methods.xFileSize = temp_file_size;
    temp_methods.xLock = temp_lock;
    temp_methods.xUnlock = temp_unlock;
    temp_methods.xCheckReservedLock = temp_check_reserved_lock;
    temp_methods.xFileControl = temp_file_control;
    temp_methods.xSectorSize = temp_sector_size;
    temp_methods.xDeviceCharacteristics = temp_device_characteristics;
    register_result = sqlite3_vfs_register(&temp_vfs, 0);
}

int coffer_tempvfs_register(void) {
    pthread_once(&registered, register_once);
    return register_result;
}
