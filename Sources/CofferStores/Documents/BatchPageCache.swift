import CofferEngine
import CofferRecords

/// The writer's page cache, widened for the duration of a ``DocumentStore/batch(_:)`` and narrowed back
/// before the batch's transaction ends.
///
/// A batch inserts its attribute rows sorted, a few thousand documents at a time (``AttributeBuffer``),
/// and each such run visits the same leaf pages again: the ends of every value's run of rows (W11's
/// ages, cities, scores, coordinates and tags, about 2,700 places for 100,000 documents). With the
/// default 2 MiB cache (512 pages of 4 KiB) those pages do not fit, so every run writes them to the WAL
/// (a spill, encrypted) and reads them back (decrypted) in the next: W11's batch wrote 419 MB of WAL
/// frames and read 418 MB back for a 73 MB file. With 16 MiB they stay in the cache and the batch
/// writes 80 MB (8 MiB: 292 MB). See the Documents article.
///
/// SQLite allocates cache pages only as they are used, so a small batch costs nothing more; the pages
/// above the connection's own size are freed once the transaction commits or rolls back (they are
/// clean then, and SQLite drops unpinned pages above the limit). A connection whose cache is already
/// at least this large keeps its own.
enum BatchPageCache {
    /// The page cache a batch runs with, in KiB: within an app extension's memory budget (tens of MB
    /// for the whole process, with the 8 MiB ``DecryptedPageCache`` and the batch's held rows).
    static let kibibytes = 16_384

    /// Runs `body` with the cache of `db` at least ``kibibytes``, then puts the connection's own size
    /// back, whether `body` returns or throws.
    static func widening<T>(_ db: Connection, _ body: () throws -> T) throws -> T {
        let previous = try db.fetchValue(Int.self, sql: "PRAGMA cache_size") ?? 0
        let pageSize = try db.pageSize() ?? 4096
        // A negative size is in KiB, a positive one in pages.
        let previousKiB = previous < 0 ? -previous : previous * pageSize / 1024
        guard previousKiB < kibibytes else { return try body() }
        try db.execute(sql: "PRAGMA cache_size = -\(kibibytes)")
        let restore = "PRAGMA cache_size = \(previous)"
        let result: T
        do {
            result = try body()
        } catch {
            try? db.execute(sql: restore)
            throw error
        }
        try db.execute(sql: restore)
        return result
    }
}
