import CSQLCipher
import CofferEngine
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
    ///
    /// Inlinable: a hit is specialized in the caller's module for the record type (the snapshot's place,
    /// the connection's store of the type, one lookup under the store's lock, the record's copy), where
    /// Coffer's generic code would look up the record type's metadata at run time on every call.
    @inlinable
    public static func fetchOne(_ db: Connection, id: Int64) throws -> Self? {
        if let record = db.recordCacheHit(Self.self, id: id) { return record }
        return try fetchOneThroughCache(db, id: id)
    }

    /// The whole lookup: places the snapshot and finds the store when the hit path could not, then a hit
    /// or a miss.
    @usableFromInline
    static func fetchOneThroughCache(_ db: Connection, id: Int64) throws -> Self? {
        var commits: UInt64 = 0
        guard let store = try db.recordCacheStore(Self.self, commits: &commits) else {
            return try RecordLookup.of(Self.self).fetch(Self.self, db, id: id)?.record
        }
        if let record = store.record(rowID: id, commits: commits) { return record }
        return try fetchAndStore(db, id: id, in: store, commits: commits)
    }

    /// A miss: the record by SQL, kept in `store`. Out of line: its `(record, cost)` result is a tuple of
    /// the generic record type, whose metadata its frame looks up at entry (about 1,400 instructions in
    /// unspecialized code), which a hit must not pay.
    @inline(never)
    private static func fetchAndStore(
        _ db: Connection, id: Int64, in store: RecordCacheStore<Self>, commits: UInt64
    ) throws -> Self? {
        let entryBytes = RecordCacheStore<Self>.bytesPerEntry
        guard let (record, cost) = try store.lookup.fetch(Self.self, db, id: id, entryBytes: entryBytes) else { return nil }
        store.store(record, rowID: id, cost: cost, commits: commits)
        return record
    }
}

extension Connection {
    /// The record of `Record` cached for `id` when this connection's read transaction already has its
    /// snapshot placed and the type's store at hand, and the store holds a record current for that
    /// snapshot; nil otherwise (``CachedRecord/fetchOneThroughCache(_:id:)`` then does the rest). The
    /// same checks as the full path's, in the same order: only their lookups are inlined.
    @inlinable
    func recordCacheHit<Record: CachedRecord>(_ type: Record.Type, id: Int64) -> Record? {
        guard case .exact(let commits) = snapshotStamp.placement, let store = recordCacheStoreHeld(type) else {
            return nil
        }
        // The connection's parts keep the store (they are never removed, and only this connection's
        // caller, on this thread, adds to them): it is used as it is held, with no retain and release.
        return store._withUnsafeGuaranteedRef { $0.isEnabled ? $0.record(rowID: id, commits: commits) : nil }
    }

    /// This connection's store of `Record` if it has made one, as held by its parts.
    @inlinable
    func recordCacheStoreHeld<Record: CachedRecord>(_ type: Record.Type) -> Unmanaged<RecordCacheStore<Record>>? {
        let key = ObjectIdentifier(type)
        for entry in attachmentView.parts where entry.key == key {
            // Only ever appended by `recordCacheStore`: the part under a type's identifier is its store.
            return Unmanaged.passUnretained(unsafeDowncast(entry.part, to: RecordCacheStore<Record>.self))
        }
        return nil
    }
}

extension Connection {
    /// This connection's store of `Record`, with the number of commits the running read transaction's
    /// snapshot sees in `commits`; nil when the cache is not used (a write, a snapshot that cannot be placed
    /// exactly, a type that is not cached). Starts the database's record cache at the first call. (No
    /// tuple or optional of a generic type on this path: in unspecialized code each costs a metadata lookup
    /// per call.)
    fileprivate func recordCacheStore<Record: CachedRecord>(
        _ type: Record.Type, commits: inout UInt64
    ) throws -> RecordCacheStore<Record>? {
        if attachmentView.attachment == nil {
            guard Record.recordCache != .none, try RecordLookup.of(type).isCacheable,
                let registry = RecordCacheRegistry.of(self)
            else { return nil }
            attachmentView.attachment = registry
        }
        switch snapshotStamp.placement {
        case .exact(let placed):
            commits = placed
        case .none, .unknown:
            return nil
        case .begun(let started, let finished):
            guard let placed = try placeSnapshot(started: started, finished: finished) else { return nil }
            commits = placed
        }
        if let held = recordCacheStoreHeld(type) {
            let store = held.takeUnretainedValue()
            return store.isEnabled ? store : nil
        }
        guard let registry = attachmentView.attachment as? RecordCacheRegistry else { return nil }
        let store = try registry.store(type)
        attachmentView.parts.append((key: ObjectIdentifier(type), part: store))
        return store.isEnabled ? store : nil
    }

    /// Places the running read transaction's snapshot, begun with these counts, at its first cached
    /// lookup (see the RecordCache article): the number of commits it sees, or nil when it cannot be
    /// placed exactly and the cache must be skipped for the whole transaction.
    private func placeSnapshot(started: UInt64, finished: UInt64) throws -> UInt64? {
        // Opens the snapshot if nothing in the transaction has yet: it starts between BEGIN and now.
        let version = try fetchValue(Int.self, sql: "PRAGMA data_version") ?? 0
        guard let clock = commitClock, started == finished, clock.counts.started == started else {
            snapshotStamp.placement = .unknown
            return nil
        }
        if let last = snapshotStamp.lastDataVersion, last.commits == started, last.version != version {
            // Another connection committed since this reader's last placed snapshot, and the writer
            // did not: a commit the cache has not heard of yet.
            (attachmentView.attachment as? RecordCacheRegistry)?.externalChange()
            snapshotStamp.placement = .unknown
            snapshotStamp.lastDataVersion = nil
            return nil
        }
        snapshotStamp.placement = .exact(commits: started)
        snapshotStamp.lastDataVersion = (version, started)
        return started
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
        let columns = try Record.columnDefinitions.map { try $0.selection().render().sql }.joined(separator: ", ")
        let sql = "SELECT \(columns) FROM \(SQLIdentifier.quote(Record.tableName)) WHERE \(SQLIdentifier.quote(key0)) = ?"
        let definition = Record.columnDefinitions.first { $0.name == key0 }
        let isInteger = definition.map { $0.isPrimaryKey && $0.affinity.uppercased() == "INTEGER" } ?? false
        let lookup = RecordLookup(sql: sql, isCacheable: isInteger && !Record.withoutRowID)
        lock.withLock { lookups[key] = lookup }
        return lookup
    }

    /// Runs the lookup: the record, and with `entryBytes` (a cache entry's own bytes) its estimated size
    /// in memory: those bytes plus the heap storage of its text and blob columns.
    func fetch<Record: TableRecord>(
        _ type: Record.Type, _ db: Connection, id: Int64, entryBytes: Int? = nil
    ) throws -> (record: Record, cost: Int)? {
        try db.withStatement(sql: sql, arguments: [id]) { statement in
            guard try statement.step() else { return nil }
            var cost = 0
            if let entryBytes {
                cost = entryBytes
                for column in 0..<Int32(statement.columnCount) {
                    let type = sqlite3_column_type(statement.handle, column)
                    guard type == SQLITE_TEXT || type == SQLITE_BLOB else { continue }
                    let bytes = Int(sqlite3_column_bytes(statement.handle, column))
                    // Up to 15 bytes live inside a Swift string or data value; more take a heap block.
                    if bytes > 15 { cost += bytes + Self.heapBlockHeader }
                }
            }
            return (try StatementDecoder.forRecord(type, on: statement).record(type), cost)
        }
    }

    /// The header of a string's or a data value's heap block.
    static let heapBlockHeader = 32
}
