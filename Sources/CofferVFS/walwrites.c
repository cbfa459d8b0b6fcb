// See include/CofferVFS.h ("coffer": WAL frames written in one call per commit). Includes SQLCipher's
// header, never the system SQLite's.
//
// SQLite writes each WAL frame with two calls, its 24-byte header and then its page, so a commit of n
// pages costs 2n `pwrite`s. This VFS keeps a WAL file's writes that follow each other in the file in a
// buffer and writes them with one call when the frame that commits the transaction is complete (its
// header's bytes 4-7, the database size after the commit, are not zero: the WAL format's definition of a
// commit frame). That write happens inside SQLite's own write of the commit frame's page, before SQLite
// publishes the commit in the -shm file, so no other connection or process can read a frame that is not
// in the file yet, and a failed write fails the commit as it would have without the buffer. Only appends
// are kept: a write that changes a frame already written (SQLite overwrites a page a big transaction
// spilled, and rewrites checksums after the commit frame) goes to the file at once, after the buffer.
// Every other call on a WAL file (read, sync, truncate, size, lock, file control, close) and any write
// that does not continue the buffer write the buffer first, and so does every call on the shared memory
// of the connection's database file (its WAL locks: a transaction that spilled frames and rolled back
// writes them before it gives up the write lock). A WAL file that could not be linked to its database
// file keeps nothing. Other files pass through unchanged.
//
// The wrapped VFS is the process's default VFS when a file opens (not when this one registers), so a VFS
// a test installs as the default later still sees every call.
#include "CofferVFS.h"

#include <sqlcipher/sqlite3.h>

#include <pthread.h>
#include <string.h>

// A WAL frame's header: page number, database size after a commit (0 for other frames), salts, checksums.
#define FRAME_HEADER 24
// The largest run of writes kept: SQLite's unix VFS writes at most 0x1ffff bytes a call (it masks the
// count), 31 frames of 4096-byte pages. Allocated at a WAL file's first write, so connections that only
// read (readers, the checkpointer) never hold one.
#define CAPACITY 0x1ffff

typedef struct CofferFile {
    sqlite3_file base;
    sqlite3_file *real;  // the wrapped VFS's file, allocated at open
    int wal;             // a WAL file: its consecutive writes are combined
    unsigned char *buffer;
    int used;
    sqlite3_int64 start;       // the file offset of buffer[0]
    sqlite3_int64 header_end;  // just past the last frame header written, or -1
    int header_commits;        // that header is a commit frame's
    // The end of what this file's writes appended since SQLite last wrote the WAL header (offset 0). A
    // write below it changes a frame already written (a page overwritten in place, a checksum rewritten
    // after the commit frame) and goes straight to the file.
    sqlite3_int64 appended;
    // The same connection's WAL file (on a database file) or database file (on a WAL file), linked when
    // SQLite opens the WAL (`coffer_device_characteristics`); a WAL file without one keeps nothing.
    struct CofferFile *partner;
} CofferFile;

static sqlite3_vfs coffer_vfs;
static sqlite3_io_methods methods[3];  // by the wrapped file's version: 1, 2 (shared memory), 3 (mmap)
static pthread_once_t registered = PTHREAD_ONCE_INIT;
static int register_result = SQLITE_ERROR;

// The WAL file this thread opened last, until SQLite's next call on this thread links it to its
// database file: right after opening a connection's WAL, SQLite asks the database file for its device
// characteristics (`sqlite3WalOpen`, SQLite 3.15 and 3.49 alike).
static __thread struct CofferFile *opened_wal;

// The VFS files open through: the default one, unless that is this one.
static sqlite3_vfs *wrapped(void) {
    sqlite3_vfs *vfs = sqlite3_vfs_find(NULL);
    return vfs == NULL || vfs == &coffer_vfs ? sqlite3_vfs_find("unix") : vfs;
}

// Writes the buffer, if anything is in it. The buffer is empty afterwards, written or not.
static int flush(CofferFile *file) {
    if (file->used == 0) return SQLITE_OK;
    int used = file->used;
    file->used = 0;
    return file->real->pMethods->xWrite(file->real, file->buffer, used, file->start);
}

static int coffer_close(sqlite3_file *handle) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    if (opened_wal == file) opened_wal = NULL;
    if (file->partner) file->partner->partner = NULL;
    file->partner = NULL;
    int closed = file->real->pMethods->xClose(file->real);
    sqlite3_free(file->buffer);
    sqlite3_free(file->real);
    file->buffer = NULL;
    file->real = NULL;
    return rc == SQLITE_OK ? closed : rc;
}

static int coffer_read(sqlite3_file *handle, void *buffer, int amount, sqlite3_int64 offset) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xRead(file->real, buffer, amount, offset) : rc;
}

static int coffer_write(sqlite3_file *handle, const void *data, int amount, sqlite3_int64 offset) {
    CofferFile *file = (CofferFile *)handle;
    if (!file->wal || file->partner == NULL) return file->real->pMethods->xWrite(file->real, data, amount, offset);
    if (offset == 0) file->appended = 0;  // the WAL header: SQLite starts the file over
    int rc = SQLITE_OK;
    if (offset < file->appended) {
        // A frame written before changes (SQLite overwrites a page the transaction wrote and, after the
        // commit frame, rewrites checksums): in place, now, after what the buffer holds.
        file->header_end = -1;
        file->header_commits = 0;
        rc = flush(file);
        return rc == SQLITE_OK ? file->real->pMethods->xWrite(file->real, data, amount, offset) : rc;
    }
    file->appended = offset + amount;
    // The page of a commit frame: once it is in, the transaction's frames are written.
    int completes_commit = file->header_commits && offset == file->header_end;
    if (amount == FRAME_HEADER) {
        const unsigned char *header = data;
        file->header_end = offset + FRAME_HEADER;
        file->header_commits = (header[4] | header[5] | header[6] | header[7]) != 0;
    } else {
        file->header_end = -1;
        file->header_commits = 0;
    }
    if (file->used > 0 && (offset != file->start + file->used || amount > CAPACITY - file->used)) rc = flush(file);
    if (rc != SQLITE_OK) return rc;
    if (amount > CAPACITY || (file->buffer == NULL && (file->buffer = sqlite3_malloc(CAPACITY)) == NULL)) {
        return file->real->pMethods->xWrite(file->real, data, amount, offset);
    }
    if (file->used == 0) file->start = offset;
    memcpy(file->buffer + file->used, data, (size_t)amount);
    file->used += amount;
    return completes_commit ? flush(file) : SQLITE_OK;
}

static int coffer_truncate(sqlite3_file *handle, sqlite3_int64 size) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    if (rc == SQLITE_OK) rc = file->real->pMethods->xTruncate(file->real, size);
    if (rc == SQLITE_OK && file->appended > size) file->appended = size;
    return rc;
}

static int coffer_sync(sqlite3_file *handle, int flags) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xSync(file->real, flags) : rc;
}

static int coffer_file_size(sqlite3_file *handle, sqlite3_int64 *size) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xFileSize(file->real, size) : rc;
}

static int coffer_lock(sqlite3_file *handle, int level) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xLock(file->real, level) : rc;
}

static int coffer_unlock(sqlite3_file *handle, int level) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xUnlock(file->real, level) : rc;
}

static int coffer_check_reserved_lock(sqlite3_file *handle, int *result) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xCheckReservedLock(file->real, result) : rc;
}

static int coffer_file_control(sqlite3_file *handle, int op, void *argument) {
    CofferFile *file = (CofferFile *)handle;
    int rc = flush(file);
    return rc == SQLITE_OK ? file->real->pMethods->xFileControl(file->real, op, argument) : rc;
}

static int coffer_sector_size(sqlite3_file *handle) {
    CofferFile *file = (CofferFile *)handle;
    return file->real->pMethods->xSectorSize(file->real);
}

static int coffer_device_characteristics(sqlite3_file *handle) {
    CofferFile *file = (CofferFile *)handle;
    CofferFile *wal = opened_wal;
    if (wal != NULL) {
        opened_wal = NULL;
        if (!file->wal && file->partner == NULL && wal->partner == NULL) {
            file->partner = wal;
            wal->partner = file;
        }
    }
    return file->real->pMethods->xDeviceCharacteristics(file->real);
}

// Before any call on a database file's shared memory (the WAL's locks, the commit's publication): its
// WAL's buffer is written. After a commit it is already empty; after a transaction that spilled frames
// and rolled back it holds frames nobody will read, written now, while this connection still holds the
// write lock, as SQLite would have written them, so that no later write of them lands on frames another
// connection has committed since. A failure is ignored: those frames are not part of any commit.
static void flush_partner(CofferFile *file) {
    if (file->partner != NULL && file->partner->used > 0) (void)flush(file->partner);
}

static int coffer_shm_map(sqlite3_file *handle, int region, int size, int extend, void volatile **out) {
    CofferFile *file = (CofferFile *)handle;
    flush_partner(file);
    return file->real->pMethods->xShmMap(file->real, region, size, extend, out);
}

static int coffer_shm_lock(sqlite3_file *handle, int offset, int count, int flags) {
    CofferFile *file = (CofferFile *)handle;
    flush_partner(file);
    return file->real->pMethods->xShmLock(file->real, offset, count, flags);
}

static void coffer_shm_barrier(sqlite3_file *handle) {
    CofferFile *file = (CofferFile *)handle;
    flush_partner(file);
    file->real->pMethods->xShmBarrier(file->real);
}

static int coffer_shm_unmap(sqlite3_file *handle, int delete_flag) {
    CofferFile *file = (CofferFile *)handle;
    flush_partner(file);
    return file->real->pMethods->xShmUnmap(file->real, delete_flag);
}

static int coffer_fetch(sqlite3_file *handle, sqlite3_int64 offset, int amount, void **out) {
    CofferFile *file = (CofferFile *)handle;
    return file->real->pMethods->xFetch(file->real, offset, amount, out);
}

static int coffer_unfetch(sqlite3_file *handle, sqlite3_int64 offset, void *page) {
    CofferFile *file = (CofferFile *)handle;
    return file->real->pMethods->xUnfetch(file->real, offset, page);
}

static int coffer_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *handle, int flags, int *out_flags) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    CofferFile *file = (CofferFile *)handle;
    memset(file, 0, sizeof *file);
    if (inner == NULL) return SQLITE_ERROR;
    file->real = sqlite3_malloc(inner->szOsFile);
    if (file->real == NULL) return SQLITE_NOMEM;
    memset(file->real, 0, (size_t)inner->szOsFile);
    int rc = inner->xOpen(inner, name, file->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        if (file->real->pMethods) file->real->pMethods->xClose(file->real);
        sqlite3_free(file->real);
        file->real = NULL;
        return rc;
    }
    file->wal = (flags & SQLITE_OPEN_WAL) != 0;
    file->header_end = -1;
    if (file->wal) opened_wal = file;
    int version = file->real->pMethods->iVersion;
    file->base.pMethods = &methods[version >= 3 ? 2 : version == 2 ? 1 : 0];
    return SQLITE_OK;
}

// The rest of the VFS is the wrapped one's, looked up at each call like the files' VFS.
static int coffer_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xDelete(inner, name, sync_dir);
}

static int coffer_access(sqlite3_vfs *vfs, const char *name, int flags, int *result) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xAccess(inner, name, flags, result);
}

static int coffer_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xFullPathname(inner, name, size, out);
}

static void *coffer_dl_open(sqlite3_vfs *vfs, const char *name) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xDlOpen(inner, name);
}

static void coffer_dl_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    inner->xDlError(inner, size, out);
}

static void (*coffer_dl_sym(sqlite3_vfs *vfs, void *library, const char *symbol))(void) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xDlSym(inner, library, symbol);
}

static void coffer_dl_close(sqlite3_vfs *vfs, void *library) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    inner->xDlClose(inner, library);
}

static int coffer_randomness(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xRandomness(inner, size, out);
}

static int coffer_sleep(sqlite3_vfs *vfs, int microseconds) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xSleep(inner, microseconds);
}

static int coffer_current_time(sqlite3_vfs *vfs, double *now) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xCurrentTime(inner, now);
}

static int coffer_get_last_error(sqlite3_vfs *vfs, int size, char *out) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    return inner->xGetLastError ? inner->xGetLastError(inner, size, out) : 0;
}

static int coffer_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *now) {
    (void)vfs;
    sqlite3_vfs *inner = wrapped();
    if (inner->iVersion >= 2 && inner->xCurrentTimeInt64) return inner->xCurrentTimeInt64(inner, now);
    double days = 0;
    int rc = inner->xCurrentTime(inner, &days);
    *now = (sqlite3_int64)(days * 86400000.0);
    return rc;
}

static void register_once(void) {
    sqlite3_vfs *inner = wrapped();
    if (inner == NULL) return;
    coffer_vfs.iVersion = 2;
    coffer_vfs.szOsFile = (int)sizeof(CofferFile);
    coffer_vfs.mxPathname = inner->mxPathname;
    coffer_vfs.zName = COFFER_VFS_NAME;
    coffer_vfs.xOpen = coffer_open;
    coffer_vfs.xDelete = coffer_delete;
    coffer_vfs.xAccess = coffer_access;
    coffer_vfs.xFullPathname = coffer_full_pathname;
    coffer_vfs.xDlOpen = coffer_dl_open;
    coffer_vfs.xDlError = coffer_dl_error;
    coffer_vfs.xDlSym = coffer_dl_sym;
    coffer_vfs.xDlClose = coffer_dl_close;
    coffer_vfs.xRandomness = coffer_randomness;
    coffer_vfs.xSleep = coffer_sleep;
    coffer_vfs.xCurrentTime = coffer_current_time;
    coffer_vfs.xGetLastError = coffer_get_last_error;
    coffer_vfs.xCurrentTimeInt64 = coffer_current_time_int64;
    for (int i = 0; i < 3; i++) {
        sqlite3_io_methods *m = &methods[i];
        m->iVersion = i + 1;
        m->xClose = coffer_close;
        m->xRead = coffer_read;
        m->xWrite = coffer_write;
        m->xTruncate = coffer_truncate;
        m->xSync = coffer_sync;
        m->xFileSize = coffer_file_size;
        m->xLock = coffer_lock;
        m->xUnlock = coffer_unlock;
        m->xCheckReservedLock = coffer_check_reserved_lock;
        m->xFileControl = coffer_file_control;
        m->xSectorSize = coffer_sector_size;
        m->xDeviceCharacteristics = coffer_device_characteristics;
        if (i >= 1) {
            m->xShmMap = coffer_shm_map;
            m->xShmLock = coffer_shm_lock;
            m->xShmBarrier = coffer_shm_barrier;
            m->xShmUnmap = coffer_shm_unmap;
        }
        if (i >= 2) {
            m->xFetch = coffer_fetch;
            m->xUnfetch = coffer_unfetch;
        }
    }
    register_result = sqlite3_vfs_register(&coffer_vfs, 0);
}

int coffer_vfs_register(void) {
    pthread_once(&registered, register_once);
    return register_result;
}
