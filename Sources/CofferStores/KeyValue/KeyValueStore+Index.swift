import CofferEngine
import CofferRecords
import Foundation

extension KeyValueStore {
    /// Rewrites the index rows of every item that decodes as `Value` (in `bucket`, or in all buckets),
    /// from the store's current ``Configuration/indexes``; returns how many items were reindexed.
    ///
    /// Index rows are written with each `put`, so this is only needed after adding an index field to a
    /// store that already holds items:
    ///
    /// ```swift
    /// var configuration = KeyValueStore.Configuration(indexes: [Post.publishedAt, Post.likes])  // likes is new
    /// let posts = try KeyValueStore(database: db, name: "posts", configuration: configuration)
    /// try posts.rebuildIndexes(decodingAs: Post.self)
    /// ```
    ///
    /// Items that do not decode as `Value` (other types stored in the same store) keep their index rows.
    /// It runs in one write transaction, decoding every item: budget for it like a migration.
    @discardableResult
    public func rebuildIndexes<Value: Decodable & Sendable>(decodingAs type: Value.Type, in bucket: String? = nil) throws -> Int {
        try writeTransaction { db, _ in try self.rebuildIndexes(Value.self, bucket: bucket, in: db) }
    }

    /// Async ``rebuildIndexes(decodingAs:in:)``.
    @discardableResult
    public func rebuildIndexes<Value: Decodable & Sendable>(decodingAs type: Value.Type, in bucket: String? = nil) async throws
        -> Int
    {
        try await writeTransaction { db, _ in try self.rebuildIndexes(Value.self, bucket: bucket, in: db) }
    }

    private func rebuildIndexes<Value: Decodable & Sendable>(_ type: Value.Type, bucket: String?, in db: Connection) throws -> Int
    {
        let condition = KeyValueSchema.bucketCondition(bucket)
        var items: [(id: Int64, bucket: String, value: Value)] = []
        let value = ColumnCompression.readSQL("value", decompressing: schema.readsCompressed)
        let sql = "SELECT id, bucket, key, \(value) FROM \(schema.items) WHERE \(condition.sql)"
        try db.forEachRow(sql: sql, arguments: condition.arguments) { row in
            let location = location(row.string(at: 1), row.string(at: 2))
            // Values of other types are not this call's business: skip what does not decode.
            if let value = try? StoredValueCoding.decode(
                Value.self, from: row.value(at: 3), coder: configuration.coder, at: location)
            {
                items.append((row.int64(at: 0), location.bucket, value))
            }
        }
        for item in items {
            try db.execute(sql: schema.deleteIndexRows, arguments: [item.id])
            for definition in configuration.indexes {
                guard let value = definition.indexValue(of: item.value) else { continue }
                try db.execute(
                    sql: schema.insertIndexRow,
                    arguments: StatementArguments([.integer(item.id), .text(definition.name), .text(item.bucket), value]))
            }
        }
        return items.count
    }
}
