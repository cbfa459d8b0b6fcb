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
/// default capacity, 64 MiB, holds about 7,800 pages of 4 KiB (the capacity includes about 300
/// bytes of bookkeeping per page). Memory is taken as pages are cached, so a small database costs
/// about twice the size of the pages read more than once, never the whole capacity. The plaintext
/// stays in process memory, like SQLite's own page cache, and never reaches the disk. It is wiped
/// when the last connection using the cache closes, on ``purge()``, and when the capacity changes.
/// When room is needed, the least recently used page goes.
///
/// ```swift
/// DecryptedPageCache.capacityKiB = 256 * 1024  // a bigger cache for a big, read-heavy database
/// DecryptedPageCache.capacityKiB = 0           // or none: every page read is decrypted again
/// ```
///
/// The setting applies to every encrypted ``Database`` in the process, including those already open,
/// except that connections opened while the capacity was 0 never use the cache. Plaintext databases
/// do not use it, and neither do connections the app opens outside Coffer.
public enum DecryptedPageCache {
    /// The cache's capacity, in KiB. Default 65536 (64 MiB); 0 turns the cache off, and so does any
    /// capacity under about 1 MiB. Setting it empties the cache.
    public static var capacityKiB: Int {
        get { coffer_page_cache_capacity() / 1024 }
        set { coffer_page_cache_set_capacity(max(0, newValue) * 1024) }
    }

    /// Wipes every cached page. The capacity stays.
    public static func purge() {
        coffer_page_cache_purge()
    }

    /// How many page decryptions were served from the cache, and how many were computed, since the
    /// process started.
    public static var counts: (hits: Int, misses: Int) {
        var hits: UInt64 = 0
        var misses: UInt64 = 0
        coffer_page_cache_counts(&hits, &misses)
        return (Int(hits), Int(misses))
    }
}
