import CofferEngine
import CofferRecords
import Foundation

/// When an item stops being visible.
public enum KeyValueExpiry: Sendable, Equatable {
    /// Use the store's ``KeyValueStore/Configuration/defaultTimeToLive`` (never, when it has none).
    case storeDefault
    /// The item never expires.
    case never
    /// The item expires this many seconds after it is written.
    case after(TimeInterval)
    /// The item expires at this date.
    case at(Date)

    /// The expiry date for an item written at `now`, or nil for never.
    func date(now: Date, storeDefault: TimeInterval?) -> Date? {
        switch self {
        case .storeDefault: return storeDefault.map { now.addingTimeInterval($0) }
        case .never: return nil
        case .after(let interval): return now.addingTimeInterval(interval)
        case .at(let date): return date
        }
    }
}

/// Which items a capped store removes first when it holds too many items or bytes.
public enum KeyValueEvictionPolicy: Sendable, Equatable {
    /// The least recently written items go first (a FIFO queue, like Kache's queues).
    case oldest
    /// The least recently read or written items go first (an LRU pool, like Kache's pools).
    ///
    /// Reads record their access in memory; the next write through the store saves them, so a read never
    /// takes the write lock.
    case leastRecentlyUsed
}

extension KeyValueStore {
    /// How a store encodes, caches, expires, caps and indexes its items.
    ///
    /// ```swift
    /// var configuration = KeyValueStore.Configuration()
    /// configuration.defaultTimeToLive = 24 * 3600
    /// configuration.maxItemCount = 10_000
    /// configuration.evictionPolicy = .leastRecentlyUsed
    /// configuration.indexes = [Post.publishedAt, Post.likes]
    /// let posts = try KeyValueStore(database: db, name: "posts", configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// Encodes values that have no SQLite storage class of their own (default JSON).
        public var coder: any KeyValueCoder
        /// The lifetime of items written with ``KeyValueExpiry/storeDefault``; nil means forever.
        public var defaultTimeToLive: TimeInterval?
        /// At most this many items; the excess is evicted at the end of each write. Nil: no cap.
        public var maxItemCount: Int?
        /// At most this many bytes of values and metadata; the excess is evicted at the end of each
        /// write. Nil: no cap.
        public var maxByteCount: Int?
        /// Which items go first when a cap is exceeded.
        public var evictionPolicy: KeyValueEvictionPolicy
        /// The decoded-object cache's budget, in stored bytes of the cached items; 0 turns it off.
        public var cacheCostLimit: Int
        /// Expired items are deleted by the first write at least this long after the previous purge
        /// (they are invisible to reads at once in any case; a capped store purges on every write). Nil:
        /// only ``KeyValueStore/purgeExpired()`` and ``KeyValueStore/startPurgingExpired(every:)`` delete them.
        public var purgeInterval: TimeInterval?
        /// The secondary indexes kept in step with the items, by field name.
        public var indexes: [any KeyValueIndexDefinition]
        /// The clock used for timestamps and expiry; inject one in tests.
        public var now: @Sendable () -> Date
        /// How values are compressed (nil: never, the default). `.zstd` or `.dictionary(id)` store each
        /// value as `coffer_compress` does for a compressed column (a value that does not shrink is stored
        /// as it is; strings come back as strings); `.off` writes plain values and still reads the ones
        /// compressed before. Metadata, keys and index fields stay plain. See the Compression article.
        public var valueCompression: ColumnCompression?

        /// Creates a configuration; every parameter has a default.
        public init(
            coder: any KeyValueCoder = JSONKeyValueCoder(),
            defaultTimeToLive: TimeInterval? = nil,
            maxItemCount: Int? = nil,
            maxByteCount: Int? = nil,
            evictionPolicy: KeyValueEvictionPolicy = .oldest,
            cacheCostLimit: Int = 8 * 1024 * 1024,
            purgeInterval: TimeInterval? = 60,
            indexes: [any KeyValueIndexDefinition] = [],
            now: @escaping @Sendable () -> Date = { Date() },
            valueCompression: ColumnCompression? = nil
        ) {
            self.valueCompression = valueCompression
            self.coder = coder
            self.defaultTimeToLive = defaultTimeToLive
            self.maxItemCount = maxItemCount
            self.maxByteCount = maxByteCount
            self.evictionPolicy = evictionPolicy
            self.cacheCostLimit = cacheCostLimit
            self.purgeInterval = purgeInterval
            self.indexes = indexes
            self.now = now
        }
    }
}
