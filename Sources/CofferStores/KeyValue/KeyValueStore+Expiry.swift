import CofferEngine
import CofferRecords
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

    /// Purges expired items in the background every `interval` seconds until the returned task is
    /// cancelled or the store is released.
    ///
    /// ```swift
    /// let purging = store.startPurgingExpired(every: 300)
    /// // …
    /// purging.cancel()
    /// ```
    ///
    /// Failures (a busy or closed database) are ignored: the next tick, the next write or
    /// ``purgeExpired()`` catches up, and expired items are invisible to reads meanwhile.
    @discardableResult
    public func startPurgingExpired(every interval: TimeInterval) -> Task<Void, Never> {
        let nanoseconds = UInt64(max(0.001, interval) * 1_000_000_000)
        return Task.detached(priority: .background) { [weak self] in
            while !Task.isCancelled {
                do { try await Task.sleep(nanoseconds: nanoseconds) } catch { return }
                guard let self else { return }
                _ = try? await self.purgeExpired()
            }
        }
    }

    /// Purges expired items each time `ticks` produces an element, until it ends or the task is
    /// cancelled: drive purges from your own schedule (app backgrounding, a timer, a test).
    ///
    /// ```swift
    /// let (ticks, tick) = AsyncStream.makeStream(of: Void.self)
    /// Task { await store.purgeExpired(on: ticks) }
    /// tick.yield()   // purge now
    /// ```
    public func purgeExpired<Ticks: AsyncSequence>(on ticks: Ticks) async {
        do {
            for try await _ in ticks {
                if Task.isCancelled { return }
                _ = try? await purgeExpired()
            }
        } catch {
            return
        }
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
        if capped {
            // Expired items must not push live ones out, so a capped store purges on every write (the
            // partial index on expires_at makes that a short range scan).
            _ = try purgeExpired(in: db, context: context)
            try enforceCaps(in: db, context: context)
        } else if let interval = configuration.purgeInterval, state.purgeIsDue(now: context.now, interval: interval) {
            _ = try purgeExpired(in: db, context: context)
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
