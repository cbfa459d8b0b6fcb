import CSQLCipher
import Foundation

extension TableRecord {
    /// The record whose integer primary key is `id`, or nil: one primary-key lookup.
    ///
    /// ```swift
    /// let author = try database.read { db in try Author.fetchOne(db, id: 42) }
    /// ```
    ///
    /// A ``CachedRecord`` type answers from its record cache when it can (see ``CachedRecord``); any
    /// other type runs `SELECT … WHERE pk = ?`. Throws ``CofferError/apiMisuse`` when the type has no
    /// single-column primary key.
    public static func fetchOne(_ db: Connection, id: Int64) throws -> Self? {
        if let cached = Self.self as? any CachedRecord.Type {
            return try cached.fetchOneThroughCache(db, id: id) as? Self
        }
        return try RecordLookup.of(Self.self).fetch(Self.self, db, id: id)?.record
    }
}

extension CachedRecord {
    /// The record whose integer primary key is `id`, or nil, from the record cache when a record
    /// current for this read's snapshot is there; otherwise by SQL, keeping what it read.
    public static func fetchOne(_ db: Connection, id: Int64) throws -> Self? { try fetchOneThroughCache(db, id: id) }

    fileprivate static func fetchOneThroughCache(_ db: Connection, id: Int64) throws -> Self? {
        let lookup = try RecordLookup.of(Self.self)
        guard lookup.isCacheable, Self.recordCache != .none, let registry = RecordCacheRegistry.of(db),
            let commits = try db.placeSnapshot(registry)
        else { return try lookup.fetch(Self.self, db, id: id)?.record }
        let hit = registry.withStore(Self.self) { $0.record(rowID: id, commits: commits) }
        if let record = hit as? Self { return record }
        guard let (record, cost) = try lookup.fetch(Self.self, db, id: id) else { return nil }
        registry.withStore(Self.self) { $0.store(record, rowID: id, cost: cost, commits: commits) }
        return record
    }
}

extension Connection {
    /// The number of commits the running read transaction's snapshot sees, placing it at the first call
    /// (see the RecordCache article); nil when it cannot be placed exactly and the cache must be skipped.
    fileprivate func placeSnapshot(_ registry: RecordCacheRegistry) throws -> UInt64? {
        switch snapshotStamp.placement {
        case .none, .unknown:
            return nil
        case .exact(let commits):
            return commits
        case .begun(let started, let finished):
            // Opens the snapshot if nothing in the transaction has yet: it starts between BEGIN and now.
            let version = try fetchValue(Int.self, sql: "PRAGMA data_version") ?? 0
            guard let clock = commitClock, started == finished, clock.counts.started == started else {
                snapshotStamp.placement = .unknown
                return nil
            }
            if let last = snapshotStamp.lastDataVersion, last.commits == started, last.version != version {
                // Another connection committed since this reader's last placed snapshot, and the writer
                // did not: a commit the cache has not heard of yet.
                registry.externalChange()
                snapshotStamp.placement = .unknown
                snapshotStamp.lastDataVersion = nil
                return nil
            }
            snapshotStamp.placement = .exact(commits: started)
            snapshotStamp.lastDataVersion = (version, started)
            return started
        }
    }
}

/// A record type's primary-key lookup: its SQL and whether its key is a rowid the cache can follow.
struct RecordLookup: Sendable {
    let sql: String
    /// True for a rowid table whose primary key is one integer column (a rowid alias).
    let isCacheable: Bool

    private static let lock = NSLock()
    nonisolated(unsafe) private static var lookups: [ObjectIdentifier: RecordLookup] = [:]

    /// The lookup of `type`, worked out once per process.
    static func of<Record: TableRecord>(_ type: Record.Type) throws -> RecordLookup {
        let key = ObjectIdentifier(type)
        if let lookup = lock.withLock({ lookups[key] }) { return lookup }
        let keys = Record.primaryKeyColumnNames
        guard keys.count == 1, let key0 = keys.first else {
            throw CofferError(
                code: .apiMisuse, message: "\(Record.tableName) has no single-column primary key to fetch by id")
        }
        let columns = Record.columnDefinitions.map { SQLIdentifier.quote($0.name) }.joined(separator: ", ")
        let sql = "SELECT \(columns) FROM \(SQLIdentifier.quote(Record.tableName)) WHERE \(SQLIdentifier.quote(key0)) = ?"
        let definition = Record.columnDefinitions.first { $0.name == key0 }
        let isInteger = definition.map { $0.isPrimaryKey && $0.affinity.uppercased() == "INTEGER" } ?? false
        let lookup = RecordLookup(sql: sql, isCacheable: isInteger && !Record.withoutRowID)
        lock.withLock { lookups[key] = lookup }
        return lookup
    }

    /// Runs the lookup: the record and its estimated size in memory (its layout, the bytes of its
    /// columns, and the cache's bookkeeping per entry).
    func fetch<Record: TableRecord>(_ type: Record.Type, _ db: Connection, id: Int64) throws -> (record: Record, cost: Int)? {
        try db.withStatement(sql: sql, arguments: [id]) { statement in
            guard try statement.step() else { return nil }
            var cost = MemoryLayout<Record>.stride + Self.entryOverhead
            for column in 0..<Int32(statement.columnCount) { cost += Int(sqlite3_column_bytes(statement.handle, column)) }
            return (try StatementDecoder.forRecord(type, on: statement).record(type), cost)
        }
    }

    /// A cache entry's own bytes: its slot, its index entry and the record's existential box header.
    static let entryOverhead = 96
}
