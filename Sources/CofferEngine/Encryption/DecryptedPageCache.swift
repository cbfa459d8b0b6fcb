internal import CofferPageCache

/// The process-wide cache of decrypted pages that Coffer's encrypted connections share.
///
/// In WAL mode, SQLite empties a reader's page cache whenever another connection has committed. The
/// reader then reads again every page it touches, and SQLCipher authenticates and decrypts each one
/// again (HMAC-SHA1 and AES-256-CBC, about 79,000 instructions per 4 KiB page on the benchmark
/// machine), even the pages the commit left alone. This cache keeps those results across commits and
/// across connections. A page is served from it only when its ciphertext, IV, page number and keys
/// are byte-for-byte those of a page it authenticated and decrypted before. The answer is then
/// exactly the one SQLCipher would compute. A changed, damaged or tampered page never matches, so it
/// is authenticated from scratch and fails as it would without the cache.
///
/// A page is copied in the second time a connection decrypts it; the first time, only its IV is
/// noted. A page read once, as in a full scan, costs no copy and pushes nothing out. Pages this
/// process writes are not copied in either: readers cache them once they have read them twice.
///
/// Each cached page holds its ciphertext and its plaintext, so it costs twice the page size: the
/// default capacity, 8 MiB, holds about 960 pages of 4 KiB (the capacity includes about 300 bytes of
/// bookkeeping per page), enough for the interior pages of a table of a few hundred thousand rows and
/// the leaves read most. Memory is taken as pages are cached, and the pages held never take more than
/// twice the size of the encrypted databases open through ``Database`` (main files and WALs, measured
/// as they grow and at checkpoints; a truncating checkpoint frees the pages above it): a small database costs
/// about twice the size of its pages read more than once, never the whole capacity. The capacity is one
/// budget for the whole process, shared by every open database. The plaintext stays in process memory,
/// like SQLite's own page cache, and never reaches the disk. It is wiped when the last connection using
/// the cache closes, on ``purge()`` and ``Database/releaseMemory()``, and when the capacity changes.
/// When room is needed, the least recently used page goes.
///
/// ```swift
/// DecryptedPageCache.capacityKiB = 64 * 1024  // a bigger cache for a big, read-heavy database
/// DecryptedPageCache.capacityKiB = 0          // or none: every page read is decrypted again
/// DecryptedPageCache.purge()                  // on a memory warning, or entering the background
/// ```
///
/// The setting applies to every encrypted ``Database`` in the process, including those already open,
/// except that connections opened while the capacity was 0 never use the cache. Plaintext databases
/// do not use it, and neither do connections the app opens outside Coffer.
///
/// The cache wraps SQLCipher's crypto provider, on 3.4.1 and 4.x alike (the two shapes of provider each
/// have their wrapper in `CofferPageCache/provider.c`).
public enum DecryptedPageCache {
    /// The cache's capacity, in KiB: the process-wide budget every encrypted database shares. Default
    /// 8192 (8 MiB); 0 turns the cache off, and so does any capacity under about 1 MiB. Setting it
    /// empties the cache.
    public static var capacityKiB: Int {
        get { coffer_page_cache_capacity() / 1024 }
        set { coffer_page_cache_set_capacity(max(0, newValue) * 1024) }
    }

    /// Wipes and frees every cached page, of every database; the capacity stays. Call it on a memory
    /// warning or when the app enters the background (``Database/releaseMemory()`` calls it too).
    public static func purge() {
        coffer_page_cache_purge()
    }

    /// The pages cached now, and the bytes they take (ciphertext and plaintext; bookkeeping aside).
    public static var usage: (pages: Int, bytes: Int) {
        var pages = 0
        var bytes = 0
        coffer_page_cache_usage(&pages, &bytes)
        return (pages, bytes)
    }

    /// The cap on ``usage``'s bytes in force now: twice the size of the encrypted databases open through
    /// ``Database`` in this process (main files and WALs, measured at open and close, at checkpoints and
    /// every 16 WAL frames), or `Int.max` when none is open; the capacity bounds it too. A truncating
    /// checkpoint and ``Database/releaseMemory()`` free what is held above it.
    public static var limitBytes: Int {
        Int(clamping: coffer_page_cache_limit())
    }

    /// How many page decryptions were served from the cache, and how many were computed, since the
    /// process started.
    public static var counts: (hits: Int, misses: Int) {
        var hits: UInt64 = 0
        var misses: UInt64 = 0
        coffer_page_cache_counts(&hits, &misses)
        return (Int(hits), Int(misses))
    }

    /// How many page HMACs and page ciphers Coffer's connections computed with OpenSSL objects kept
    /// between pages (`kept`), and how many SQLCipher's own provider computed (`provider`), since the
    /// process started; pages the cache served count in neither. With SQLCipher's OpenSSL provider every
    /// call is `kept` (see `CofferPageCache/page_crypto.h`).
    package static var cryptoCounts: (kept: Int, provider: Int) {
        var kept: UInt64 = 0
        var provider: UInt64 = 0
        coffer_page_crypto_counts(&kept, &provider)
        return (Int(kept), Int(provider))
    }
}
