import CofferEngine
import CofferRecords
import Foundation

/// What one write transaction did, gathered as it runs.
final class WriteContext {
    /// The clock reading for the whole transaction: every item it writes gets the same timestamps.
    let now: Date
    var invalidation = CacheInvalidation()

    init(now: Date) { self.now = now }

    func touched(_ bucket: String, _ key: String) {
        invalidation.keys.insert(DecodedObjectCache.Key(bucket: bucket, key: key))
    }

    func touchedEverything() { invalidation.all = true }
}

extension KeyValueStore {
    // MARK: Transactions

    /// Runs `body` in one write transaction followed by the store's upkeep (saving read accesses, purging
    /// expired items when due, enforcing caps), then updates the cache once the transaction is over.
    func writeTransaction<T>(_ body: (Connection, WriteContext) throws -> T) throws -> T {
        let result: (T, CacheInvalidation)
        cache.beginWrite()
        do {
            result = try database.write { db in try runTransactionBody(body, in: db) }
        } catch {
            cache.endWrite(.everything)
            throw error
        }
        cache.endWrite(result.1)
        return result.0
    }

    /// Async ``writeTransaction(_:)``, queued on the writer without blocking the caller's thread.
    func writeTransaction<T: Sendable>(_ body: @escaping @Sendable (Connection, WriteContext) throws -> T) async throws -> T {
        let result: (T, CacheInvalidation)
        cache.beginWrite()
        do {
            result = try await database.write { db in try self.runTransactionBody(body, in: db) }
        } catch {
            cache.endWrite(.everything)
            throw error
        }
        cache.endWrite(result.1)
        return result.0
    }

    /// The part both ``writeTransaction(_:)`` variants run inside the transaction: `body`, then upkeep.
    private func runTransactionBody<T>(
        _ body: (Connection, WriteContext) throws -> T, in db: Connection
    ) throws -> (T, CacheInvalidation) {
        let context = WriteContext(now: configuration.now())
        let value = try body(db, context)
        try performUpkeep(in: db, context: context)
        // This commit's keys are invalidated by `endWrite`: the cache's change follower skips it.
        database.observation.tagCurrentTransaction(ObjectIdentifier(cache))
        return (value, context.invalidation)
    }

    // MARK: Operations inside a transaction

    /// Inserts or updates one item and rewrites its index rows.
    ///
    /// SQLite 3.15 has no UPSERT, and `INSERT OR REPLACE` would delete the row (losing `created_at` and
    /// the rowid the index points at), so this looks the row up and updates it in place.
    func save(_ item: PendingItem, in db: Connection, context: WriteContext) throws {
        let now = context.now
        let expiresAt = item.expiry.date(now: now, storeDefault: configuration.defaultTimeToLive)
        let id: Int64
        if let existing = try db.fetchValue(Int64.self, sql: schema.selectID, arguments: [item.bucket, item.key]) {
            try db.execute(
                sql: schema.update,
                arguments: StatementArguments([
                    item.value, item.metadata, now.databaseValue, now.databaseValue,
                    expiresAt.databaseValue, .integer(Int64(item.size)), .integer(existing),
                ]))
            try db.execute(sql: schema.deleteIndexRows, arguments: [existing])
            id = existing
        } else {
            try db.execute(
                sql: schema.insert,
                arguments: StatementArguments([
                    .text(item.bucket), .text(item.key), item.value, item.metadata,
                    now.databaseValue, now.databaseValue, now.databaseValue,
                    expiresAt.databaseValue, .integer(Int64(item.size)),
                ]))
            id = db.lastInsertedRowID
        }
        for (field, value) in item.indexValues {
            try db.execute(
                sql: schema.insertIndexRow,
                arguments: StatementArguments([.integer(id), .text(field), .text(item.bucket), value]))
        }
        context.touched(item.bucket, item.key)
    }

    /// Deletes items by key; returns how many existed.
    func delete(keys: [String], bucket: String, in db: Connection, context: WriteContext) throws -> Int {
        var deleted = 0
        for key in keys {
            try db.execute(sql: schema.deleteByKey, arguments: [bucket, key])
            deleted += db.changesCount
            context.touched(bucket, key)
        }
        return deleted
    }

    /// Deletes items whose key starts with `prefix`, as a key range (see ``KeyPrefixRange``).
    func delete(prefix: String, bucket: String, in db: Connection, context: WriteContext) throws -> Int {
        let range = KeyPrefixRange.condition(prefix)
        try db.execute(
            sql: "DELETE FROM \(schema.items) WHERE bucket = ? AND \(range.sql)", arguments: [bucket] + range.arguments)
        context.touchedEverything()
        return db.changesCount
    }

    /// Deletes a bucket's items, or all items when `bucket` is nil.
    func clear(bucket: String?, in db: Connection, context: WriteContext) throws -> Int {
        let condition = KeyValueSchema.bucketCondition(bucket)
        try db.execute(sql: "DELETE FROM \(schema.items) WHERE \(condition.sql)", arguments: condition.arguments)
        context.touchedEverything()
        return db.changesCount
    }
}
