// See include/CofferTestVFS.h. Includes SQLCipher's header, never the system SQLite's.
#include "CofferTestVFS.h"

#include <sqlcipher/sqlite3.h>

#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SECTOR 512
#define BUCKETS 1024

typedef struct Sector {
    sqlite3_int64 index;
    int length;  // bytes of the sector that existed at the last sync (the rest was past the end)
    unsigned char data[SECTOR];
    struct Sector *next;
} Sector;

// Sync state of one path, shared by every connection that opens it.
typedef struct Tracked {
    char *path;
    sqlite3_int64 synced_size;
    Sector *buckets[BUCKETS];
    struct Tracked *next;
} Tracked;

typedef struct CrashFile {
    sqlite3_file base;
    Tracked *tracked;  // NULL for files without a name (temporary files)
    sqlite3_file *real;
} CrashFile;

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static sqlite3_vfs *unix_vfs;
static sqlite3_vfs crash_vfs;
static sqlite3_io_methods crash_methods;
static Tracked *tracked_files;
static int power_cut;
static long long countdown = -1;
static long long operations;

// Fault injection (independent of the power cut): the N-th write/sync/truncate of the armed kinds fails.
static int fault_kinds;           // COFFER_TESTVFS_FAULT_* bits; 0 = disarmed
static long long fault_countdown;  // operations of those kinds left before the first failure
static int fault_full;            // fail with SQLITE_FULL instead of an SQLITE_IOERR_* code
static int fault_sticky;          // once fired, every later operation of those kinds fails too
static int fault_firing;          // fired and sticky
static long long fault_seen;      // operations of the armed kinds seen since arming
static long long fault_fired;     // failures returned since arming

static Tracked *find_tracked(const char *path, sqlite3_int64 size) {
    for (Tracked *t = tracked_files; t; t = t->next) {
        if (strcmp(t->path, path) == 0) return t;
    }
    Tracked *t = calloc(1, sizeof(Tracked));
    if (!t) return NULL;
    t->path = strdup(path);
    t->synced_size = size;
    t->next = tracked_files;
    tracked_files = t;
    return t;
}

static void forget_sectors(Tracked *t) {
    for (int b = 0; b < BUCKETS; b++) {
        Sector *s = t->buckets[b];
        while (s) {
            Sector *next = s->next;
            free(s);
            s = next;
        }
        t->buckets[b] = NULL;
    }
}

static void forget_all(void) {
    Tracked *t = tracked_files;
    while (t) {
        Tracked *next = t->next;
        forget_sectors(t);
        free(t->path);
        free(t);
        t = next;
    }
    tracked_files = NULL;
}

// Counts one write or sync; returns nonzero when the power is (now) off. Caller holds the mutex.
static int consume_operation(void) {
    if (power_cut) return 1;
    operations++;
    if (countdown > 0 && --countdown == 0) power_cut = 1;
    return power_cut;
}

// Returns the error to inject for one operation of `kind` (0 = let it through). Caller holds the mutex.
static int consume_fault(int kind, int ioerr) {
    if (!(fault_kinds & kind)) return 0;
    fault_seen++;
    if (!fault_firing) {
        if (fault_countdown <= 0 || --fault_countdown > 0) return 0;
        if (fault_sticky) fault_firing = 1;
    }
    fault_fired++;
    return fault_full ? SQLITE_FULL : ioerr;
}

// Keeps the synced content of every sector [offset, offset+amount) touches, once per sync period.
static void remember_sectors(CrashFile *f, sqlite3_int64 offset, int amount) {
    Tracked *t = f->tracked;
    sqlite3_int64 first = offset / SECTOR, last = (offset + amount - 1) / SECTOR;
    for (sqlite3_int64 index = first; index <= last; index++) {
        Sector **bucket = &t->buckets[index % BUCKETS];
        Sector *s = *bucket;
        while (s && s->index != index) s = s->next;
        if (s) continue;
        s = calloc(1, sizeof(Sector));
        if (!s) continue;
        s->index = index;
        sqlite3_int64 start = index * SECTOR;
        sqlite3_int64 available = t->synced_size - start;
        s->length = available <= 0 ? 0 : (available >= SECTOR ? SECTOR : (int)available);
        if (s->length > 0) {
            // A short read leaves zeros, which is what the disk would show there.
            f->real->pMethods->xRead(f->real, s->data, s->length, start);
        }
        s->next = *bucket;
        *bucket = s;
    }
}

// MARK: I/O methods

static int crash_close(sqlite3_file *file) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xClose(f->real);
}

static int crash_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xRead(f->real, buffer, amount, offset);
}

static int crash_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *f = (CrashFile *)file;
    pthread_mutex_lock(&mutex);
    if (consume_operation()) {
        pthread_mutex_unlock(&mutex);
        return SQLITE_IOERR_WRITE;
    }
    int fault = consume_fault(COFFER_TESTVFS_FAULT_WRITE, SQLITE_IOERR_WRITE);
    if (fault) {
        pthread_mutex_unlock(&mutex);
        return fault;
    }
    if (f->tracked) remember_sectors(f, offset, amount);
    int rc = f->real->pMethods->xWrite(f->real, buffer, amount, offset);
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int crash_truncate(sqlite3_file *file, sqlite3_int64 size) {
    CrashFile *f = (CrashFile *)file;
    pthread_mutex_lock(&mutex);
    int off = power_cut;
    int fault = off ? 0 : consume_fault(COFFER_TESTVFS_FAULT_TRUNCATE, SQLITE_IOERR_TRUNCATE);
    pthread_mutex_unlock(&mutex);
    if (off) return SQLITE_IOERR_TRUNCATE;
    if (fault) return fault;
    return f->real->pMethods->xTruncate(f->real, size);
}

static int crash_sync(sqlite3_file *file, int flags) {
    CrashFile *f = (CrashFile *)file;
    pthread_mutex_lock(&mutex);
    if (consume_operation()) {
        pthread_mutex_unlock(&mutex);
        return SQLITE_IOERR_FSYNC;
    }
    int fault = consume_fault(COFFER_TESTVFS_FAULT_SYNC, SQLITE_IOERR_FSYNC);
    if (fault) {
        pthread_mutex_unlock(&mutex);
        return fault;
    }
    int rc = f->real->pMethods->xSync(f->real, flags);
    if (rc == SQLITE_OK && f->tracked) {
        forget_sectors(f->tracked);
        sqlite3_int64 size = 0;
        f->real->pMethods->xFileSize(f->real, &size);
        f->tracked->synced_size = size;
    }
    pthread_mutex_unlock(&mutex);
    return rc;
}

static int crash_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xFileSize(f->real, size);
}

static int crash_lock(sqlite3_file *file, int lock) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xLock(f->real, lock);
}

static int crash_unlock(sqlite3_file *file, int lock) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xUnlock(f->real, lock);
}

static int crash_check_reserved(sqlite3_file *file, int *out) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xCheckReservedLock(f->real, out);
}

static int crash_file_control(sqlite3_file *file, int op, void *argument) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xFileControl(f->real, op, argument);
}

static int crash_sector_size(sqlite3_file *file) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xSectorSize(f->real);
}

static int crash_device_characteristics(sqlite3_file *file) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xDeviceCharacteristics(f->real);
}

static int crash_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xShmMap(f->real, page, size, extend, out);
}

static int crash_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xShmLock(f->real, offset, n, flags);
}

static void crash_shm_barrier(sqlite3_file *file) {
    CrashFile *f = (CrashFile *)file;
    f->real->pMethods->xShmBarrier(f->real);
}

static int crash_shm_unmap(sqlite3_file *file, int delete_flag) {
    CrashFile *f = (CrashFile *)file;
    return f->real->pMethods->xShmUnmap(f->real, delete_flag);
}

static int crash_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    // No memory-mapped reads: every byte goes through xRead.
    (void)file; (void)offset; (void)amount;
    *out = NULL;
    return SQLITE_OK;
}

static int crash_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    (void)file; (void)offset; (void)pointer;
    return SQLITE_OK;
}

// MARK: VFS methods

static int crash_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *out_flags) {
    (void)vfs;
    CrashFile *f = (CrashFile *)file;
    memset(f, 0, sizeof(CrashFile));
    f->real = (sqlite3_file *)&f[1];
    int rc = unix_vfs->xOpen(unix_vfs, name, f->real, flags, out_flags);
    if (rc != SQLITE_OK) {
        f->real->pMethods = NULL;
        return rc;
    }
    if (name && !(flags & SQLITE_OPEN_DELETEONCLOSE)) {
        sqlite3_int64 size = 0;
        f->real->pMethods->xFileSize(f->real, &size);
        pthread_mutex_lock(&mutex);
        f->tracked = find_tracked(name, size);
        pthread_mutex_unlock(&mutex);
    }
    f->base.pMethods = &crash_methods;
    return SQLITE_OK;
}

static int crash_delete(sqlite3_vfs *vfs, const char *name, int sync_dir) {
    (void)vfs;
    pthread_mutex_lock(&mutex);
    int off = power_cut;
    pthread_mutex_unlock(&mutex);
    if (off) return SQLITE_IOERR_DELETE;
    return unix_vfs->xDelete(unix_vfs, name, sync_dir);
}

static int crash_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return unix_vfs->xAccess(unix_vfs, name, flags, out);
}

static int crash_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return unix_vfs->xFullPathname(unix_vfs, name, size, out);
}

static void *crash_dlopen(sqlite3_vfs *vfs, const char *name) { (void)vfs; return unix_vfs->xDlOpen(unix_vfs, name); }
static void crash_dlerror(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; unix_vfs->xDlError(unix_vfs, size, out); }
static void (*crash_dlsym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return unix_vfs->xDlSym(unix_vfs, handle, symbol);
}
static void crash_dlclose(sqlite3_vfs *vfs, void *handle) { (void)vfs; unix_vfs->xDlClose(unix_vfs, handle); }
static int crash_randomness(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return unix_vfs->xRandomness(unix_vfs, size, out); }
static int crash_sleep(sqlite3_vfs *vfs, int micros) { (void)vfs; return unix_vfs->xSleep(unix_vfs, micros); }
static int crash_current_time(sqlite3_vfs *vfs, double *out) { (void)vfs; return unix_vfs->xCurrentTime(unix_vfs, out); }
static int crash_last_error(sqlite3_vfs *vfs, int size, char *out) { (void)vfs; return unix_vfs->xGetLastError(unix_vfs, size, out); }
static int crash_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return unix_vfs->xCurrentTimeInt64(unix_vfs, out);
}

// MARK: Public functions

int coffer_testvfs_register(int make_default) {
    unix_vfs = sqlite3_vfs_find("unix");
    if (!unix_vfs) return SQLITE_ERROR;
    crash_methods = (sqlite3_io_methods){
        .iVersion = 3, .xClose = crash_close, .xRead = crash_read, .xWrite = crash_write,
        .xTruncate = crash_truncate, .xSync = crash_sync, .xFileSize = crash_file_size, .xLock = crash_lock,
        .xUnlock = crash_unlock, .xCheckReservedLock = crash_check_reserved, .xFileControl = crash_file_control,
        .xSectorSize = crash_sector_size, .xDeviceCharacteristics = crash_device_characteristics,
        .xShmMap = crash_shm_map, .xShmLock = crash_shm_lock, .xShmBarrier = crash_shm_barrier,
        .xShmUnmap = crash_shm_unmap, .xFetch = crash_fetch, .xUnfetch = crash_unfetch,
    };
    crash_vfs = (sqlite3_vfs){
        .iVersion = 2, .szOsFile = (int)sizeof(CrashFile) + unix_vfs->szOsFile, .mxPathname = unix_vfs->mxPathname,
        .zName = "coffer-crash", .xOpen = crash_open, .xDelete = crash_delete, .xAccess = crash_access,
        .xFullPathname = crash_full_pathname, .xDlOpen = crash_dlopen, .xDlError = crash_dlerror,
        .xDlSym = crash_dlsym, .xDlClose = crash_dlclose, .xRandomness = crash_randomness, .xSleep = crash_sleep,
        .xCurrentTime = crash_current_time, .xGetLastError = crash_last_error,
        .xCurrentTimeInt64 = crash_current_time_int64,
    };
    pthread_mutex_lock(&mutex);
    forget_all();
    power_cut = 0;
    countdown = -1;
    operations = 0;
    fault_kinds = 0;
    fault_firing = 0;
    fault_seen = 0;
    fault_fired = 0;
    pthread_mutex_unlock(&mutex);
    return sqlite3_vfs_register(&crash_vfs, make_default);
}

int coffer_testvfs_unregister(void) {
    int rc = sqlite3_vfs_unregister(&crash_vfs);
    if (unix_vfs) sqlite3_vfs_register(unix_vfs, 1);
    pthread_mutex_lock(&mutex);
    forget_all();
    power_cut = 0;
    countdown = -1;
    fault_kinds = 0;
    fault_firing = 0;
    pthread_mutex_unlock(&mutex);
    return rc;
}

void coffer_testvfs_arm(long long n) {
    pthread_mutex_lock(&mutex);
    countdown = n < 0 ? -1 : n;
    if (n == 0) power_cut = 1;
    pthread_mutex_unlock(&mutex);
}

void coffer_testvfs_cut_now(void) {
    pthread_mutex_lock(&mutex);
    power_cut = 1;
    pthread_mutex_unlock(&mutex);
}

int coffer_testvfs_is_cut(void) {
    pthread_mutex_lock(&mutex);
    int off = power_cut;
    pthread_mutex_unlock(&mutex);
    return off;
}

long long coffer_testvfs_operation_count(void) {
    pthread_mutex_lock(&mutex);
    long long n = operations;
    pthread_mutex_unlock(&mutex);
    return n;
}

static unsigned long long next_random(unsigned long long *state) {
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

long long coffer_testvfs_apply_power_loss(unsigned long long seed) {
    unsigned long long state = seed;
    long long reverted = 0;
    pthread_mutex_lock(&mutex);
    for (Tracked *t = tracked_files; t; t = t->next) {
        int fd = open(t->path, O_RDWR);
        if (fd < 0) continue;
        off_t size = lseek(fd, 0, SEEK_END);
        int kept_past_synced_end = 0;
        // Walk sectors in index order so the outcome depends on the seed alone.
        sqlite3_int64 last_index = size > 0 ? (size - 1) / SECTOR : -1;
        for (sqlite3_int64 index = 0; index <= last_index; index++) {
            Sector *s = t->buckets[index % BUCKETS];
            while (s && s->index != index) s = s->next;
            if (!s) continue;
            if (next_random(&state) & 1) {
                if ((index + 1) * SECTOR > t->synced_size) kept_past_synced_end = 1;
                continue;
            }
            unsigned char sector[SECTOR];
            memset(sector, 0, SECTOR);
            memcpy(sector, s->data, (size_t)s->length);
            sqlite3_int64 start = index * SECTOR;
            sqlite3_int64 end = start + SECTOR > size ? size : start + SECTOR;
            if (end > start && pwrite(fd, sector, (size_t)(end - start), start) == (ssize_t)(end - start)) reverted++;
        }
        if (!kept_past_synced_end && size > t->synced_size) {
            if (ftruncate(fd, t->synced_size) != 0) { /* the file keeps zeros past its synced end */ }
        }
        fsync(fd);
        close(fd);
    }
    forget_all();
    power_cut = 0;
    countdown = -1;
    pthread_mutex_unlock(&mutex);
    return reverted;
}

void coffer_testvfs_fail(int kinds, long long nth, int full, int sticky) {
    pthread_mutex_lock(&mutex);
    fault_kinds = kinds;
    fault_countdown = nth;
    fault_full = full;
    fault_sticky = sticky;
    fault_firing = 0;
    fault_seen = 0;
    fault_fired = 0;
    pthread_mutex_unlock(&mutex);
}

long long coffer_testvfs_fault_operations_seen(void) {
    pthread_mutex_lock(&mutex);
    long long n = fault_seen;
    pthread_mutex_unlock(&mutex);
    return n;
}

long long coffer_testvfs_faults_fired(void) {
    pthread_mutex_lock(&mutex);
    long long n = fault_fired;
    pthread_mutex_unlock(&mutex);
    return n;
}
