import CofferEngine
import CofferRecords
import Foundation

extension KeyValueStore {
    /// Observes the value at `key`: delivered at start and after every commit that changed the store's
    /// items (nil while there is none). Expiry is checked at each fetch, not on a timer.
    ///
    /// ```swift
    /// for try await profile in users.observe(User.self, for: "42") {
    ///     show(profile)
    /// }
    /// ```
    public func observe<Value: Decodable & Sendable & Equatable>(
        _ type: Value.Type = Value.self, for key: String, in bucket: String = KeyValueStore.defaultBucket,
        options: ObservationOptions = ObservationOptions()
    ) -> DatabaseObservation<Value?> {
        let sql = schema.selectByKey
        let configuration = self.configuration
        let location = location(bucket, key)
        return database.observe(options: options) { db -> Value? in
            guard let stored = try Self.fetchItem(sql: sql, bucket: bucket, key: key, now: configuration.now(), in: db) else {
                return nil
            }
            return try StoredValueCoding.decode(Value.self, from: stored.value, coder: configuration.coder, at: location)
        }
    }

    /// Observes the keys of `bucket`, in key order.
    public func observeKeys(
        in bucket: String = KeyValueStore.defaultBucket, options: ObservationOptions = ObservationOptions()
    ) -> DatabaseObservation<[String]> {
        let sql = "SELECT key FROM \(schema.items) WHERE bucket = ? AND \(KeyValueSchema.notExpired) ORDER BY key"
        let now = configuration.now
        return database.observe(options: options) { db in
            try db.fetchAll(sql: sql, arguments: [bucket, now()]).map { try $0.decode(String.self, at: 0) }
        }
    }

    /// Observes the whole store: each bucket's keys, in key order.
    public func observeAllKeys(options: ObservationOptions = ObservationOptions()) -> DatabaseObservation<[String: [String]]> {
        let sql = "SELECT bucket, key FROM \(schema.items) WHERE \(KeyValueSchema.notExpired) ORDER BY bucket, key"
        let now = configuration.now
        return database.observe(options: options) { db in
            var keys: [String: [String]] = [:]
            for row in try db.fetchAll(sql: sql, arguments: [now()]) {
                keys[try row.decode(String.self, at: 0), default: []].append(try row.decode(String.self, at: 1))
            }
            return keys
        }
    }
}

/// Empties a store's decoded-object cache after commits to its table that the store did not make
/// itself — raw SQL on the same database, another process — as cheaply as change observation allows:
///
/// - it subscribes for table names only (``ObservationDemand/tables``): the writer's update hook compares
///   a table name per row, with no statement trace and no row list;
/// - other processes are looked for only while the cache is used, never on a timer of their own: after
///   a look, hits are served for ``ObservationCenter/externalLatency`` seconds; the first hit after that is
///   a miss (read from the database) that asks for the next look. An idle store costs nothing.
///
/// The store's own writes tag their transaction and invalidate just their keys (`writeTransaction`).
final class KeyValueCacheFollower: Sendable {
    private let center: ObservationCenter
    private let subscription: Int?

    init(database: Database, cache: DecodedObjectCache, table: String) {
        let tag = ObjectIdentifier(cache)
        let lowered = table.lowercased()
        let center = database.observation
        self.center = center
        subscription = center.subscribe(.tables, tables: [lowered]) { [weak cache] changes in
            guard let cache, !changes.tags.contains(tag), changes.touches(lowercased: [lowered]) else { return }
            cache.invalidate(.everything)
        }
        let latency = center.externalLatency
        guard subscription != nil, latency > 0 else { return }
        cache.followExternalChanges { [weak cache] in
            guard let cache else { return }
            center.checkExternalChanges { [weak cache] in
                guard let cache else { return }
                cache.externalChangesWereChecked(true)
                DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + latency) { [weak cache] in
                    cache?.externalChangesWereChecked(false)
                }
            }
        }
    }

    deinit { subscription.map(center.unsubscribe) }
}
