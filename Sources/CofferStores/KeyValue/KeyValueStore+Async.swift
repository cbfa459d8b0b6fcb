import CofferEngine
import CofferRecords
import Foundation

/// The `async` twins of every store call.
///
/// Writes are queued on the database's writer without blocking the caller's thread (the same path as
/// `Database.write` async). Reads run on a background thread exactly as `Database.read` async
/// does; a cached `value` returns without leaving the caller's task.
extension KeyValueStore {
    /// Runs a synchronous read off the caller's thread.
    func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global(qos: .userInitiated).async {
                continuation.resume(with: Result { try body() })
            }
        }
    }

    // MARK: Writing

    /// Async ``put(_:for:in:expiry:)``.
    public func put<Value: Encodable & Sendable>(
        _ value: Value, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        expiry: KeyValueExpiry = .storeDefault
    ) async throws {
        let pending = try makePending(value, metadata: .null, key: key, bucket: bucket, expiry: expiry)
        try await writeTransaction { db, context in try self.save(pending, in: db, context: context) }
    }

    /// Async ``put(_:for:in:metadata:expiry:)``.
    public func put<Value: Encodable & Sendable, Metadata: Encodable & Sendable>(
        _ value: Value, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        metadata: Metadata, expiry: KeyValueExpiry = .storeDefault
    ) async throws {
        let encoded = try StoredValueCoding.encode(metadata, coder: configuration.coder, at: location(bucket, key))
        let pending = try makePending(value, metadata: encoded, key: key, bucket: bucket, expiry: expiry)
        try await writeTransaction { db, context in try self.save(pending, in: db, context: context) }
    }

    /// Async `delete(_:in:)` of one key.
    @discardableResult
    public func delete(_ key: String, in bucket: String = KeyValueStore.defaultBucket) async throws -> Bool {
        try await writeTransaction { db, context in try self.delete(keys: [key], bucket: bucket, in: db, context: context) } > 0
    }

    /// Async `delete(_:in:)` of a key list.
    @discardableResult
    public func delete(_ keys: [String], in bucket: String = KeyValueStore.defaultBucket) async throws -> Int {
        try await writeTransaction { db, context in try self.delete(keys: keys, bucket: bucket, in: db, context: context) }
    }

    /// Async ``delete(keysWithPrefix:in:)``.
    @discardableResult
    public func delete(keysWithPrefix prefix: String, in bucket: String = KeyValueStore.defaultBucket) async throws -> Int {
        try await writeTransaction { db, context in try self.delete(prefix: prefix, bucket: bucket, in: db, context: context) }
    }

    /// Async ``clear(bucket:)``.
    @discardableResult
    public func clear(bucket: String) async throws -> Int {
        try await writeTransaction { db, context in try self.clear(bucket: bucket, in: db, context: context) }
    }

    /// Async ``clearAll()``.
    @discardableResult
    public func clearAll() async throws -> Int {
        try await writeTransaction { db, context in try self.clear(bucket: nil, in: db, context: context) }
    }

    // MARK: Reading

    /// Async ``value(_:for:in:)``; a cache hit returns at once.
    public func value<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, for key: String, in bucket: String = KeyValueStore.defaultBucket
    ) async throws -> Value? {
        let now = configuration.now()
        let cacheKey = DecodedObjectCache.Key(bucket: bucket, key: key)
        if let cached = cache.value(for: cacheKey, now: now) as? Value {
            noteAccess(cacheKey, at: now)
            return cached
        }
        let generation = cache.generation
        let selectByKey = schema.selectByKey
        let found = try await database.read { db in
            try Self.fetchItem(sql: selectByKey, bucket: bucket, key: key, now: now, in: db)
        }
        guard let found else { return nil }
        return try decodeAndCache(Value.self, found, generation: generation, now: now)
    }

    /// Async ``item(_:for:in:)``.
    public func item<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, for key: String, in bucket: String = KeyValueStore.defaultBucket
    ) async throws -> KeyValueItem<Value>? {
        try await offThread { try self.item(Value.self, for: key, in: bucket) }
    }

    /// Async ``contains(_:in:)``.
    public func contains(_ key: String, in bucket: String = KeyValueStore.defaultBucket) async throws -> Bool {
        try await offThread { try self.contains(key, in: bucket) }
    }

    /// Async ``keys(in:prefix:limit:offset:)``.
    public func keys(
        in bucket: String = KeyValueStore.defaultBucket, prefix: String? = nil, limit: Int? = nil, offset: Int = 0
    ) async throws -> [String] {
        try await offThread { try self.keys(in: bucket, prefix: prefix, limit: limit, offset: offset) }
    }

    /// Async ``items(_:in:prefix:limit:offset:)``.
    public func items<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, in bucket: String = KeyValueStore.defaultBucket,
        prefix: String? = nil, limit: Int? = nil, offset: Int = 0
    ) async throws -> [KeyValueItem<Value>] {
        try await offThread { try self.items(Value.self, in: bucket, prefix: prefix, limit: limit, offset: offset) }
    }

    /// Async ``count(in:)``.
    public func count(in bucket: String = KeyValueStore.defaultBucket) async throws -> Int {
        try await offThread { try self.count(in: bucket) }
    }

    /// Async ``totalCount()``.
    public func totalCount() async throws -> Int {
        try await offThread { try self.totalCount() }
    }

    /// Async ``buckets()``.
    public func buckets() async throws -> [String] {
        try await offThread { try self.buckets() }
    }

    /// Async ``usage()``.
    public func usage() async throws -> (items: Int, bytes: Int) {
        let usage = try await offThread { try self.usage() }
        return usage
    }

    // MARK: Queries

    /// Async ``items(_:matching:)``.
    public func items<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, matching query: KeyValueQuery
    ) async throws -> [KeyValueItem<Value>] {
        try await offThread { try self.items(Value.self, matching: query) }
    }

    /// Async ``keys(matching:)``.
    public func keys(matching query: KeyValueQuery) async throws -> [String] {
        try await offThread { try self.keys(matching: query) }
    }

    /// Async ``count(matching:)``.
    public func count(matching query: KeyValueQuery) async throws -> Int {
        try await offThread { try self.count(matching: query) }
    }

    /// Async ``sum(of:matching:)``.
    public func sum<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) async throws -> Double
    {
        try await offThread { try self.sum(of: field, matching: query) }
    }

    /// Async ``average(of:matching:)``.
    public func average<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) async throws
        -> Double?
    {
        try await offThread { try self.average(of: field, matching: query) }
    }

    /// Async ``minimum(of:matching:)``.
    public func minimum<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) async throws
        -> Field?
    {
        try await offThread { try self.minimum(of: field, matching: query) }
    }

    /// Async ``maximum(of:matching:)``.
    public func maximum<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) async throws
        -> Field?
    {
        try await offThread { try self.maximum(of: field, matching: query) }
    }

    /// Async ``count(of:matching:)``.
    public func count<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) async throws -> Int {
        try await offThread { try self.count(of: field, matching: query) }
    }
}
