// Debian's libzstd (libzstd-dev): zstd's stable API for per-column compression (`zstd.h`) and its
// dictionary trainer (`zdict.h`, `ZDICT_trainFromBuffer`). Only the stable API is used, so the shared
// library's version does not matter within 1.x.
#include <zstd.h>
#include <zdict.h>
