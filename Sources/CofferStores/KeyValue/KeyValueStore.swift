import CofferEngine
import CofferRecords
import Foundation

/// A schemaless, encrypted key-value store inside a Coffer ``Database``: cache server JSON by id and read
/// it back, with metadata, expiry, caps, a decoded-object cache and secondary indexes.
///
/// ```swift
/// let database = try Database(path: "app.db", configuration: .init(encryption: .passphrase(secret)))
/// let users = try KeyValueStore(database: database, name: "users")
///
/// try users.put(User(id: 42, name: "Ada"), for: "42", metadata: ["etag": "\"abc\""], expiry: .after(3600))
/// let user = try users.value(User.self, for: "42")          // decoded once, then served from memory
/// try users.delete(keysWithPrefix: "tmp/")
/// ```
///
/// - Items are keyed by (bucket, key); both are arbitrary strings, always bound as parameters. Calls that
///   take a bucket default to ``defaultBucket``.
/// - The store's tables are created by the initializer if they do not exist yet ("on first use").
/// - Every write is one transaction on the database's writer; ``batch(_:)`` groups many. Reads run on
///   reader connections and never block writes. Every call has an `async` twin.
/// - Instances of the same named store on the same database share one decoded-object cache, so a write
///   through any of them invalidates it; commits to the store's table by other means (raw SQL, another
///   process) empty it through change observation (another process's within
///   ``Coffer/Configuration/externalChangeLatency``).
public final class KeyValueStore: Sendable {
    /// The bucket used when a call names none.
    public static let defaultBucket = "default"

    /// The store's name.
    public let name: String
    /// The database the store lives in.
    public let database: Database
    /// The store's configuration.
    public let configuration: Configuration
    let schema: KeyValueSchema
    let cache: DecodedObjectCache
    let state: KeyValueStoreState

    /// Opens the store called `name` in `database`, creating its tables if needed.
    ///
    /// - Throws: ``CofferError/invalidConfiguration`` when two index fields share a name, or the
    ///   ``CofferError`` that prevented creating the tables.
    ///
    /// ```swift
    /// let cache = try KeyValueStore(database: .temporary(), name: "images",
    ///                               configuration: .init(maxByteCount: 50 << 20, evictionPolicy: .leastRecentlyUsed))
    /// ```
    public init(database: Database, name: String, configuration: Configuration = Configuration()) throws {
        self.name = name
        self.database = database
        self.configuration = configuration
        self.schema = KeyValueSchema(storeName: name, compression: configuration.valueCompression)
        if case .dictionaries = configuration.valueCompression {
            throw CofferError(
                code: .invalidConfiguration,
                message: "store \(name.debugDescription): a value compression is .zstd, .dictionary(id) or .off")
        }
        (self.cache, self.state) = KeyValueStoreRegistry.shared.resources(
            database: database, name: name, costLimit: configuration.cacheCostLimit)
        state.followChanges(of: database, invalidating: cache, table: "kv:" + name)
        let names = configuration.indexes.map(\.name)
        if let duplicate = names.first(where: { name in names.filter { $0 == name }.count > 1 }) {
            throw CofferError(
                code: .invalidConfiguration,
                message: "store \(name.debugDescription) declares index field \(duplicate.debugDescription) twice")
        }
        // A read-only database cannot create tables; its stores must exist already.
        if !database.configuration.readOnly {
            let (script, schema) = (schema.createScript, schema)
            let marks = configuration.valueCompression != nil
            try database.write { db in
                try db.executeScript(script)
                if marks { try KeyValueCompressionMark.mark(name, schema: schema, in: db) }
            }
        }
    }

    /// Drops every cached decoded value. Commits by raw SQL and other processes already do (see the type's
    /// discussion); this is for changes no commit announces.
    public func invalidateCache() {
        cache.invalidate(.everything)
    }

    func location(_ bucket: String, _ key: String) -> ItemLocation {
        ItemLocation(store: name, bucket: bucket, key: key)
    }

    // MARK: Writing

    /// Saves `value` under `key`, replacing the item there (its metadata too) but keeping its creation date.
    ///
    /// - Parameter expiry: when the item stops being visible; by default the store's ``Configuration/defaultTimeToLive``.
    /// - Throws: ``KeyValueError`` when the value does not encode (nothing is written), or ``CofferError``.
    public func put<Value: Encodable & Sendable>(
        _ value: Value, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        expiry: KeyValueExpiry = .storeDefault
    ) throws {
        let pending = try makePending(value, metadata: .null, key: key, bucket: bucket, expiry: expiry)
        try writeTransaction { db, context in try self.save(pending, in: db, context: context) }
    }

    /// Saves `value` under `key` with `metadata` beside it (an etag, a download date…), encoded separately
    /// so the server's JSON stays untouched.
    ///
    /// ```swift
    /// try store.put(json, for: "post/7", metadata: Download(etag: etag, at: .now))
    /// ```
    public func put<Value: Encodable & Sendable, Metadata: Encodable & Sendable>(
        _ value: Value, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        metadata: Metadata, expiry: KeyValueExpiry = .storeDefault
    ) throws {
        let encoded = try StoredValueCoding.encode(metadata, coder: configuration.coder, at: location(bucket, key))
        let pending = try makePending(value, metadata: encoded, key: key, bucket: bucket, expiry: expiry)
        try writeTransaction { db, context in try self.save(pending, in: db, context: context) }
    }

    /// Deletes the item at `key`; returns whether there was one.
    @discardableResult
    public func delete(_ key: String, in bucket: String = KeyValueStore.defaultBucket) throws -> Bool {
        try writeTransaction { db, context in try self.delete(keys: [key], bucket: bucket, in: db, context: context) } > 0
    }

    /// Deletes the items at `keys`; returns how many there were.
    @discardableResult
    public func delete(_ keys: [String], in bucket: String = KeyValueStore.defaultBucket) throws -> Int {
        try writeTransaction { db, context in try self.delete(keys: keys, bucket: bucket, in: db, context: context) }
    }

    /// Deletes every item whose key starts with `prefix` (compared exactly: `%`, `_` and `\` are plain
    /// characters, and case matters); returns how many there were.
    @discardableResult
    public func delete(keysWithPrefix prefix: String, in bucket: String = KeyValueStore.defaultBucket) throws -> Int {
        try writeTransaction { db, context in try self.delete(prefix: prefix, bucket: bucket, in: db, context: context) }
    }

    /// Deletes every item in `bucket`; returns how many there were.
    @discardableResult
    public func clear(bucket: String) throws -> Int {
        try writeTransaction { db, context in try self.clear(bucket: bucket, in: db, context: context) }
    }

    /// Deletes every item in every bucket of the store; returns how many there were.
    @discardableResult
    public func clearAll() throws -> Int {
        try writeTransaction { db, context in try self.clear(bucket: nil, in: db, context: context) }
    }

    // MARK: Reading

    /// The value at `key` decoded as `Value`, or nil when there is none or it expired.
    ///
    /// Decoded values are cached in memory (see ``Configuration/cacheCostLimit``): a repeated read of an
    /// unchanged item touches neither SQLite nor the decoder.
    ///
    /// - Throws: ``KeyValueError`` when the stored value is not a `Value`.
    public func value<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, for key: String, in bucket: String = KeyValueStore.defaultBucket
    ) throws -> Value? {
        let now = configuration.now()
        let cacheKey = DecodedObjectCache.Key(bucket: bucket, key: key)
        if let cached = cache.value(for: cacheKey, now: now) as? Value {
            noteAccess(cacheKey, at: now)
            return cached
        }
        let generation = cache.generation
        let selectByKey = schema.selectByKey
        guard
            let stored = try database.read({ db in
                try Self.fetchItem(sql: selectByKey, bucket: bucket, key: key, now: now, in: db)
            })
        else {
            return nil
        }
        return try decodeAndCache(Value.self, stored, generation: generation, now: now)
    }

    /// The item at `key` with its metadata and timestamps, or nil when there is none or it expired.
    public func item<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, for key: String, in bucket: String = KeyValueStore.defaultBucket
    ) throws -> KeyValueItem<Value>? {
        let now = configuration.now()
        let selectByKey = schema.selectByKey
        guard
            let stored = try database.read({ db in
                try Self.fetchItem(sql: selectByKey, bucket: bucket, key: key, now: now, in: db)
            })
        else {
            return nil
        }
        noteAccess(DecodedObjectCache.Key(bucket: bucket, key: key), at: now)
        return try makeItem(Value.self, stored)
    }

    /// True when an unexpired item exists at `key`.
    public func contains(_ key: String, in bucket: String = KeyValueStore.defaultBucket) throws -> Bool {
        let now = configuration.now()
        let sql = "SELECT 1 FROM \(schema.items) WHERE bucket = ? AND key = ? AND \(KeyValueSchema.notExpired)"
        return try database.read { db in try db.fetchOne(sql: sql, arguments: [bucket, key, now]) != nil }
    }

    // MARK: Shared pieces

    static func fetchItem(sql: String, bucket: String, key: String, now: Date, in db: Connection) throws -> StoredItem? {
        var found: StoredItem?
        try db.forEachRow(sql: sql, arguments: [bucket, key, now]) { found = StoredItem(statement: $0) }
        return found
    }

    func decodeAndCache<Value: Decodable & Sendable>(
        _ type: Value.Type, _ stored: StoredItem, generation: UInt64, now: Date
    ) throws -> Value {
        let value = try StoredValueCoding.decode(
            Value.self, from: stored.value, coder: configuration.coder, at: location(stored.bucket, stored.key))
        let cacheKey = DecodedObjectCache.Key(bucket: stored.bucket, key: stored.key)
        cache.insert(value, cost: stored.size, expiresAt: stored.expiresAt, for: cacheKey, ifGeneration: generation)
        noteAccess(cacheKey, at: now)
        return value
    }

    func makeItem<Value: Decodable & Sendable>(_ type: Value.Type, _ stored: StoredItem) throws -> KeyValueItem<Value> {
        let location = location(stored.bucket, stored.key)
        let value = try StoredValueCoding.decode(Value.self, from: stored.value, coder: configuration.coder, at: location)
        return KeyValueItem(
            bucket: stored.bucket, key: stored.key, value: value, createdAt: stored.createdAt,
            updatedAt: stored.updatedAt, expiresAt: stored.expiresAt, storedMetadata: stored.metadata,
            coder: configuration.coder, location: location)
    }

    /// Encodes a value, its metadata and its index fields, before any transaction starts.
    func makePending<Value: Encodable>(
        _ value: Value, metadata: DatabaseValue, key: String, bucket: String, expiry: KeyValueExpiry
    ) throws -> PendingItem {
        let location = location(bucket, key)
        let coder = configuration.coder
        let indexValues = configuration.indexes.compactMap { definition in
            definition.indexValue(of: value).map { (field: definition.name, value: $0) }
        }
        return PendingItem(
            bucket: bucket, key: key,
            value: try StoredValueCoding.encode(value, coder: coder, at: location),
            metadata: metadata,
            expiry: expiry, indexValues: indexValues)
    }

    /// Records a read for LRU eviction; the next write saves it.
    func noteAccess(_ key: DecodedObjectCache.Key, at date: Date) {
        guard configuration.evictionPolicy == .leastRecentlyUsed,
            configuration.maxItemCount != nil || configuration.maxByteCount != nil
        else { return }
        state.noteAccess(key, at: date)
    }
}

/// The mutable bookkeeping of a store: reads awaiting their access-time update, and the last purge.
final class KeyValueStoreState: @unchecked Sendable {
    private let lock = NSLock()
    private var accesses: [DecodedObjectCache.Key: Date] = [:]
    private var lastPurge: Date?
    /// Invalidates the shared cache after commits made by others (see `KeyValueCacheFollower`).
    private var follower: KeyValueCacheFollower?

    /// Starts invalidating `cache` after other writers' commits to `table`, once per shared cache.
    func followChanges(of database: Database, invalidating cache: DecodedObjectCache, table: String) {
        guard cache.costLimit > 0, lock.withLock({ follower == nil }) else { return }
        // Made outside the lock: subscribing waits for the writer, whose upkeep takes this lock.
        let made = KeyValueCacheFollower(database: database, cache: cache, table: table)
        lock.withLock {
            if follower == nil { follower = made }
        }
    }

    func noteAccess(_ key: DecodedObjectCache.Key, at date: Date) {
        lock.withLock { accesses[key] = date }
    }

    /// The recorded accesses, emptied.
    func takeAccesses() -> [DecodedObjectCache.Key: Date] {
        lock.withLock {
            defer { accesses = [:] }
            return accesses
        }
    }

    /// True (and records `now`) when no purge ran within `interval` before `now`.
    func purgeIsDue(now: Date, interval: TimeInterval) -> Bool {
        lock.withLock {
            if let lastPurge, now.timeIntervalSince(lastPurge) < interval, now >= lastPurge { return false }
            lastPurge = now
            return true
        }
    }
}
