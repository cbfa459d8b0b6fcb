import CofferEngine

/// How much of a record type a database keeps in memory for primary-key lookups.
///
/// A type chooses its level by conforming to ``CachedRecord``; a type that does not is never cached
/// (``none``). Each database keeps its own cache per type.
public enum RecordCacheLevel: Sendable, Equatable {
    /// Every lookup runs SQL (the default).
    case none
    /// The records most recently fetched or used by primary key, evicted in second-chance order (the
    /// oldest fetched first, unless used since eviction last passed it) once their estimated size passes
    /// `costLimit` bytes. For types read in bursts (the rows of the screen shown).
    case recent(costLimit: Int = 256 * 1024)
    /// Every record fetched by primary key stays until a commit changes its table or the database
    /// closes. `costLimit` is only a safety cap (evicted as for ``recent(costLimit:)`` past it): for
    /// small, hot types (users, settings, contacts) that an app extension can afford to keep whole.
    case all(costLimit: Int = 4 * 1024 * 1024)

    /// The byte budget; 0 for ``none``.
    var costLimit: Int {
        switch self {
        case .none: 0
        case .recent(let limit), .all(let limit): max(0, limit)
        }
    }
}

/// A ``TableRecord`` whose primary-key lookups go through a record cache.
///
/// Declare the level on the type, as GYDataCenter's `cacheLevel` does; lookups by id then skip SQL
/// for records already fetched, and a read never sees a record older than its own snapshot:
///
/// ```swift
/// @Table("author") struct Author: Codable {
///     @Column(primaryKey: true) var id: Int64?
///     var name: String
/// }
/// extension Author: CachedRecord {
///     static var recordCache: RecordCacheLevel { .recent() }
/// }
///
/// let author = try database.read { db in try Author.fetchOne(db, id: 42) }   // SQL, then cached
/// let again = try database.read { db in try Author.fetchOne(db, id: 42) }    // no SQL
/// ```
///
/// Only a rowid table whose primary key is one integer column (`@Column(primaryKey: true) var id:
/// Int64?`) is cached: commits report their changes by rowid. Other types read through SQL whatever
/// their level.
public protocol CachedRecord: TableRecord, Sendable {
    /// This type's cache level.
    static var recordCache: RecordCacheLevel { get }
}
