import CofferEngine
import Foundation

/// One database's record caches, one ``RecordCacheStore`` per cached type, kept in step with its commits.
///
/// Started by the first lookup of a ``CachedRecord`` type: it subscribes to the database's change sets
/// (which installs the writer's change hooks, and with them the ``CommitClock``) and activates the clock.
/// It is told only of commits that change a table it has a store for (and of whole-database changes).
/// Each commit's change set forgets the rows it changed; a whole-database change (a schema change, a
/// `DELETE` SQLite reports wholesale, another process's commit) forgets everything. Rekey and close empty
/// it. Its lock guards the list of stores; each store has its own lock, the only one a hit takes.
final class RecordCacheRegistry: CommitClockAttachment, @unchecked Sendable {
    private let clock: CommitClock
    private let lock = NSLock()
    // Guarded by `lock`.
    private var stores: [ObjectIdentifier: any RecordCacheStoring] = [:]
    /// The stores' tables (lower-cased), and the change-set subscription told of commits to them.
    private var tables: Set<String> = []
    private var subscription: Int?

    private init(clock: CommitClock) { self.clock = clock }

    /// The registry of the database `connection` belongs to, started on first use; nil for a connection
    /// that belongs to no open database.
    static func of(_ connection: Connection) -> RecordCacheRegistry? {
        guard let clock = connection.commitClock else { return nil }
        var created: RecordCacheRegistry?
        let registry = clock.attachment { () -> RecordCacheRegistry? in
            created = RecordCacheRegistry(clock: clock)
            return created
        }
        if let created { created.start() }
        return registry
    }

    /// Subscribes to the database's change sets, then lets the clock count: a read transaction begun
    /// after this is placed exactly, one begun before it is not cached.
    /// The subscription follows no table until a store is made (`store(_:)` names its table); a store
    /// can only be made once the clock is active, after the subscription is known here.
    private func start() {
        guard let database = clock.owner as? Database else { return }
        guard let id = database.observation.subscribe(.rows, tables: [], { [weak self] changes in self?.apply(changes) })
        else { return }
        lock.withLock {
            subscription = id
            database.observation.setTables(tables, for: id)
        }
        clock.activate()
    }

    /// The store of `Record`, created on first use. A new store counts its table as changed at the
    /// clock's count when it joins the list: the commits before it were applied to the stores of the
    /// time, not to it, so a reader placed before any of them must not fill it.
    func store<Record: CachedRecord>(_ type: Record.Type) throws -> RecordCacheStore<Record> {
        let key = ObjectIdentifier(type)
        if let store = lock.withLock({ stores[key] }) as? RecordCacheStore<Record> { return store }
        let lookup = try RecordLookup.of(type)
        return lock.withLock {
            if let store = stores[key] as? RecordCacheStore<Record> { return store }
            // The table is followed first; then, under the lock that `apply` takes, the count is read: a
            // commit published after this reaches the new store, and one published before it had already
            // moved the count read here.
            if tables.insert(Record.tableName.lowercased()).inserted, let subscription,
                let database = clock.owner as? Database
            {
                database.observation.setTables(tables, for: subscription)
            }
            let created = RecordCacheStore<Record>(lookup: lookup, changedAt: clock.counts.started)
            stores[key] = created
            return created
        }
    }

    /// Forgets what a commit changed (on the writer's queue, before the writer is idle again).
    private func apply(_ changes: DatabaseChangeSet) {
        if changes.isWholeDatabase {
            // Another process's commit was not counted by the clock: no snapshot overlapping it is exact.
            if changes.isExternal { clock.skip() }
            removeAll()
            return
        }
        let commits = clock.counts.started
        var rowsByTable: [String: [Int64]] = [:]
        for row in changes.rows { rowsByTable[row.table.lowercased(), default: []].append(row.rowID) }
        lock.withLock {
            for store in stores.values {
                if let rows = rowsByTable[store.table] { store.invalidate(rowIDs: rows, at: commits) }
            }
        }
    }

    /// Forgets everything as of the clock's current count.
    private func removeAll() {
        let commits = clock.counts.started
        lock.withLock {
            for store in stores.values { store.removeAll(at: commits) }
        }
    }

    /// Another connection committed (a reader saw `data_version` move with no commit of ours).
    func externalChange() {
        clock.skip()
        removeAll()
    }

    func clear() {
        clock.skip()
        removeAll()
    }

    /// The records and estimated bytes each cached type holds, for measurements and tests.
    var usage: [(table: String, records: Int, cost: Int)] {
        lock.withLock {
            stores.values.map { store in
                let usage = store.usage
                return (store.table, usage.records, usage.cost)
            }
        }
    }
}
