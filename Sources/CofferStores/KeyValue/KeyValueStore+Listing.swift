import CofferEngine
import CofferRecords
import Foundation

extension KeyValueStore {
    /// The keys of `bucket` in key order, optionally only those starting with `prefix`, one page at a time.
    ///
    /// ```swift
    /// var offset = 0
    /// while case let page = try store.keys(in: "feed", limit: 100, offset: offset), !page.isEmpty {
    ///     offset += page.count
    /// }
    /// ```
    public func keys(
        in bucket: String = KeyValueStore.defaultBucket, prefix: String? = nil, limit: Int? = nil, offset: Int = 0
    ) throws -> [String] {
        try keys(matching: listing(bucket: bucket, prefix: prefix, limit: limit, offset: offset))
    }

    /// The items of `bucket` in key order, decoded as `Value`, optionally only keys starting with `prefix`.
    public func items<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, in bucket: String = KeyValueStore.defaultBucket,
        prefix: String? = nil, limit: Int? = nil, offset: Int = 0
    ) throws -> [KeyValueItem<Value>] {
        try items(Value.self, matching: listing(bucket: bucket, prefix: prefix, limit: limit, offset: offset))
    }

    /// The number of unexpired items in `bucket`.
    public func count(in bucket: String = KeyValueStore.defaultBucket) throws -> Int {
        try count(matching: KeyValueQuery(bucket: bucket))
    }

    /// The number of unexpired items in every bucket of the store.
    public func totalCount() throws -> Int {
        try count(matching: KeyValueQuery(bucket: nil))
    }

    /// The store's buckets that hold at least one unexpired item, sorted.
    public func buckets() throws -> [String] {
        let sql = "SELECT DISTINCT bucket FROM \(schema.items) WHERE \(KeyValueSchema.notExpired) ORDER BY bucket"
        let now = configuration.now()
        return try database.read { db in
            try db.fetchAll(sql: sql, arguments: [now]).map { try $0.decode(String.self, at: 0) }
        }
    }

    func listing(bucket: String, prefix: String?, limit: Int?, offset: Int) -> KeyValueQuery {
        var query = KeyValueQuery(bucket: bucket)
        query.keyPrefix = prefix
        query.limit = limit
        query.offset = offset
        return query
    }
}
