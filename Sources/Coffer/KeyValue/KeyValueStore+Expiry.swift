import Foundation

extension KeyValueStore {
    /// Deletes every expired item now; returns how many.
    ///
    /// Expired items are invisible to reads as soon as they expire; this only reclaims their space. Writes
    /// also purge by themselves every ``Configuration/purgeInterval``.
    @discardableResult
    public func purgeExpired() throws -> Int {
        try writeTransaction { db, context in try self.purgeExpired(in: db, context: context) }
    }

    /// Async ``purgeExpired()``.
    @discardableResult
    public func purgeExpired() async throws -> Int {
        try await writeTransaction { db, context in try self.purgeExpired(in: db, context: context) }
    }

    /// The number of unexpired items and the bytes of their values and metadata, over all buckets.
    public func usage() throws -> (items: Int, bytes: Int) {
        let now = configuration.now()
        let sql = "SELECT count(*), coalesce(sum(size), 0) FROM \(schema.items) WHERE \(KeyValueSchema.notExpired)"
        return try database.read { db in
            guard let row = try db.fetchOne(sql: sql, arguments: [now]) else { return (0, 0) }
            return (try row.decode(Int.self, at: 0), try row.decode(Int.self, at: 1))
        }
    }

    // MARK: Upkeep after each write

    /// Runs at the end of every write transaction: saves recorded reads, purges when due, enforces caps.
    func performUpkeep(in db: Connection, context: WriteContext) throws {
        let capped = configuration.maxItemCount != nil || configuration.maxByteCount != nil
        if capped && configuration.evictionPolicy == .leastRecentlyUsed {
            for (key, date) in state.takeAccesses() {
                try db.execute(sql: schema.touch, arguments: [date, key.bucket, key.key])
            }
        }
        if let interval = configuration.purgeInterval, state.purgeIsDue(now: context.now, interval: interval) {
            _ = try purgeExpired(in: db, context: context)
        }
        if capped {
            if configuration.purgeInterval == nil { _ = try purgeExpired(in: db, context: context) }
            try enforceCaps(in: db, context: context)
        }
    }

    func purgeExpired(in db: Connection, context: WriteContext) throws -> Int {
        try db.execute(sql: "DELETE FROM \(schema.items) WHERE expires_at <= ?", arguments: [context.now])
        let deleted = db.changesCount
        if deleted > 0 { context.touchedEverything() }
        return deleted
    }

    /// Evicts the oldest (or least recently used) items until both caps hold.
    ///
    /// Expired items are purged first when caps are set, so they never push live items out. Both caps
    /// cost a scan of the items table per write (`count(*)`, `sum(size)`); they are meant for caches of
    /// thousands of items, not millions.
    func enforceCaps(in db: Connection, context: WriteContext) throws {
        let order = configuration.evictionPolicy == .oldest ? "updated_at, id" : "accessed_at, id"
        let items = schema.items
        var evicted = 0
        if let maxItemCount = configuration.maxItemCount {
            let count = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(items)") ?? 0
            if count > maxItemCount {
                try db.execute(
                    sql: "DELETE FROM \(items) WHERE id IN (SELECT id FROM \(items) ORDER BY \(order) LIMIT ?)",
                    arguments: [count - max(0, maxItemCount)])
                evicted += db.changesCount
            }
        }
        if let maxByteCount = configuration.maxByteCount {
            var total = try db.fetchValue(Int.self, sql: "SELECT coalesce(sum(size), 0) FROM \(items)") ?? 0
            if total > maxByteCount {
                var victims: [Int64] = []
                try db.forEachRow(sql: "SELECT id, size FROM \(items) ORDER BY \(order)") { row in
                    guard total > maxByteCount else { return }
                    victims.append(row.int64(at: 0))
                    total -= Int(row.int64(at: 1))
                }
                for id in victims {
                    try db.execute(sql: "DELETE FROM \(items) WHERE id = ?", arguments: [id])
                }
                evicted += victims.count
            }
        }
        if evicted > 0 { context.touchedEverything() }
    }
}
