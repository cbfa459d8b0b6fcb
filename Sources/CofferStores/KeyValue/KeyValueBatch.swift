import CofferEngine
import CofferRecords
import Foundation

/// Many puts and deletes in one transaction: all of them happen, or none.
///
/// One transaction means one commit (one WAL sync) for the whole batch instead of one per item — the
/// problem NanoStore's `saveInterval` worked around by delaying saves, solved explicitly here. A batch
/// is only valid inside the closure given to ``KeyValueStore/batch(_:)``.
///
/// ```swift
/// try store.batch { batch in
///     for post in page { try batch.put(post, for: post.id, in: "feed") }
///     try batch.delete(keysWithPrefix: "draft/", in: "feed")
/// }
/// ```
public final class KeyValueBatch {
    let store: KeyValueStore
    let connection: Connection
    let context: WriteContext

    init(store: KeyValueStore, connection: Connection, context: WriteContext) {
        self.store = store
        self.connection = connection
        self.context = context
    }

    /// Saves `value` under `key`, as ``KeyValueStore/put(_:for:in:expiry:)`` does.
    ///
    /// - Throws: ``KeyValueError`` when the value does not encode; the whole batch is then rolled back
    ///   unless you catch the error inside the closure.
    public func put<Value: Encodable & Sendable>(
        _ value: Value, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        expiry: KeyValueExpiry = .storeDefault
    ) throws {
        let pending = try store.makePending(value, metadata: .null, key: key, bucket: bucket, expiry: expiry)
        try store.save(pending, in: connection, context: context)
    }

    /// Saves `value` with `metadata`, as ``KeyValueStore/put(_:for:in:metadata:expiry:)`` does.
    public func put<Value: Encodable & Sendable, Metadata: Encodable & Sendable>(
        _ value: Value, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        metadata: Metadata, expiry: KeyValueExpiry = .storeDefault
    ) throws {
        let encoded = try StoredValueCoding.encode(metadata, coder: store.configuration.coder, at: store.location(bucket, key))
        let pending = try store.makePending(value, metadata: encoded, key: key, bucket: bucket, expiry: expiry)
        try store.save(pending, in: connection, context: context)
    }

    /// Deletes the item at `key`; returns whether there was one.
    @discardableResult
    public func delete(_ key: String, in bucket: String = KeyValueStore.defaultBucket) throws -> Bool {
        try store.delete(keys: [key], bucket: bucket, in: connection, context: context) > 0
    }

    /// Deletes the items at `keys`; returns how many there were.
    @discardableResult
    public func delete(_ keys: [String], in bucket: String = KeyValueStore.defaultBucket) throws -> Int {
        try store.delete(keys: keys, bucket: bucket, in: connection, context: context)
    }

    /// Deletes the items whose key starts with `prefix`; returns how many there were.
    @discardableResult
    public func delete(keysWithPrefix prefix: String, in bucket: String = KeyValueStore.defaultBucket) throws -> Int {
        try store.delete(prefix: prefix, bucket: bucket, in: connection, context: context)
    }

    /// Deletes every item in `bucket`; returns how many there were.
    @discardableResult
    public func clear(bucket: String) throws -> Int {
        try store.clear(bucket: bucket, in: connection, context: context)
    }
}

extension KeyValueStore {
    /// Runs `body` in one write transaction: every put and delete it makes commits together, or none
    /// does when it throws.
    ///
    /// ```swift
    /// try store.batch { batch in
    ///     try batch.put(user, for: user.id)
    ///     try batch.delete(["stale-1", "stale-2"])
    /// }
    /// ```
    @discardableResult
    public func batch<T>(_ body: (KeyValueBatch) throws -> T) throws -> T {
        try writeTransaction { db, context in
            try body(KeyValueBatch(store: self, connection: db, context: context))
        }
    }

    /// Async ``batch(_:)``: queued on the writer without blocking the caller's thread.
    @discardableResult
    public func batch<T: Sendable>(_ body: @escaping @Sendable (KeyValueBatch) throws -> T) async throws -> T {
        try await writeTransaction { db, context in
            try body(KeyValueBatch(store: self, connection: db, context: context))
        }
    }
}
