import CofferEngine
import CofferRecords
import Foundation

/// NSUserDefaults for a Coffer database: typed settings with registered defaults, kept encrypted in the
/// database like everything else, readable and writable from any thread.
///
/// ```swift
/// let settings = try SettingsStore(database: database)
/// settings.register(defaults: ["fontSize": 13])
/// try settings.set(.dark, for: .theme)
/// let size = try settings.value(Int.self, forName: "fontSize")   // 13: registered, never written
/// try settings.remove(.theme)                                    // back to the key's default
/// for await change in settings.changes() { print(change.name) }
/// ```
///
/// - Defaults (a key's own, or registered with ``register(defaults:)``) are never written: a setting
///   has a row only once it is set, and ``remove(_:)`` deletes the row so the default shows again.
/// - Values are stored as documents (``DocumentValue``), so any `Codable` value fits and
///   ``dictionaryRepresentation()`` can show them all without knowing their types.
/// - Each write is one transaction; observers are told after it commits, in write order. While anything
///   observes, changes made elsewhere — raw SQL on the same database, another `Database` on the file,
///   another process — are told too (see ``changes()``).
public final class SettingsStore: Sendable {
    /// The store's name (its table is `"settings:<name>"`).
    public let name: String
    /// The database the settings live in.
    public let database: Database
    private let table: String
    private let state: SettingsState
    private let follower: SettingsFollower

    /// Opens the settings called `name` in `database`, creating their table if needed.
    ///
    /// - Throws: ``DocumentError`` (``DocumentError/Reason/invalidName``) when `name` contains NUL, or
    ///   the ``CofferError`` that prevented creating the table.
    public init(database: Database, name: String = "standard") throws {
        try StoreCatalog.validate(name: name, store: name)
        self.name = name
        self.database = database
        self.table = SQLIdentifier.quote("settings:" + name)
        self.state = SettingsState()
        self.follower = SettingsFollower(database: database, table: "settings:" + name, tag: ObjectIdentifier(state))
        if !database.configuration.readOnly {
            // A rowid table, so change observation reports its rows (a WITHOUT ROWID table's commits
            // reach every observer of the database as "anything may have changed").
            let sql = "CREATE TABLE IF NOT EXISTS \(table) (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL)"
            try database.write { db in try db.execute(sql: sql) }
        }
    }

    // MARK: Typed keys

    /// The setting's value: stored, else registered, else the key's default.
    ///
    /// - Throws: ``DocumentError`` (``DocumentError/Reason/decodingFailed``) when the stored value is not
    ///   a `Value`, or ``CofferError``.
    public subscript<Value>(key: SettingsKey<Value>) -> Value {
        get throws { try value(Value.self, forName: key.name) ?? key.defaultValue }
    }

    /// Stores `value` for `key`.
    public func set<Value>(_ value: Value, for key: SettingsKey<Value>) throws {
        try set(value, forName: key.name)
    }

    /// Removes the stored value of `key`, so it reads its default again.
    public func remove<Value>(_ key: SettingsKey<Value>) throws {
        try remove(name: key.name)
    }

    // MARK: Names

    /// The value stored or registered for `name` as a `Value`, or nil when there is neither.
    public func value<Value: Decodable>(_ type: Value.Type, forName name: String) throws -> Value? {
        guard let stored = try documentValue(forName: name) else { return nil }
        return try DocumentCoding.decode(Value.self, from: stored, store: self.name, key: name)
    }

    /// The value stored for `name`, else the registered default, else nil.
    public func documentValue(forName name: String) throws -> DocumentValue? {
        let sql = "SELECT value FROM \(table) WHERE key = ?"
        if let body = try database.read({ db in try db.fetchValue(Data.self, sql: sql, arguments: [name]) }) {
            guard let value = DocumentBinary.decode(body) else {
                throw DocumentError(reason: .decodingFailed, store: self.name, key: name, detail: "the stored setting is damaged")
            }
            return value
        }
        return state.registeredDefault(name)
    }

    /// Stores `value` for `name`.
    ///
    /// - Throws: ``DocumentError`` (``DocumentError/Reason/encodingFailed``) when the value does not
    ///   encode (nothing is written), or ``CofferError``.
    public func set<Value: Encodable>(_ value: Value, forName name: String) throws {
        let document = try DocumentCoding.document(from: value, store: self.name, key: name)
        let body = DocumentBinary.encode(document)
        let update = "UPDATE \(table) SET value = ? WHERE key = ?"
        let insert = "INSERT INTO \(table)(key, value) VALUES (?, ?)"
        try write { db in
            try db.execute(sql: update, arguments: [body, name])
            if db.changesCount == 0 { try db.execute(sql: insert, arguments: [name, body]) }
            return [SettingsChange(name: name, newValue: document)]
        }
    }

    /// Removes the stored value for `name` (its default shows again); nothing happens when none is stored.
    public func remove(name: String) throws {
        let sql = "DELETE FROM \(table) WHERE key = ?"
        try write { db in
            try db.execute(sql: sql, arguments: [name])
            return db.changesCount > 0 ? [SettingsChange(name: name, newValue: nil)] : []
        }
    }

    /// Removes every stored value (all settings read their defaults again).
    public func removeAll() throws {
        let names = "SELECT key FROM \(table)"
        let delete = "DELETE FROM \(table)"
        try write { db in
            let removed = try db.fetchAll(sql: names).map { try $0.decode(String.self, at: 0) }
            try db.execute(sql: delete)
            return removed.map { SettingsChange(name: $0, newValue: nil) }
        }
    }

    /// Registers values read for names that have none stored (NSUserDefaults' `register(defaults:)`);
    /// they are never written to the database. A later registration of a name replaces the earlier one.
    public func register(defaults: [String: DocumentValue]) {
        state.register(defaults)
    }

    /// Every registered default and stored value, stored values winning.
    public func dictionaryRepresentation() throws -> [String: DocumentValue] {
        let stored = try storedValues()
        return state.registeredDefaults().merging(stored) { _, stored in stored }
    }

    /// Every stored value (no defaults).
    private func storedValues() throws -> [String: DocumentValue] {
        let sql = "SELECT key, value FROM \(table)"
        var result: [String: DocumentValue] = [:]
        try database.read { db in
            try db.forEachRow(sql: sql) { row in
                guard let value = DocumentBinary.decode(row.data(at: 1)) else {
                    throw DocumentError(
                        reason: .decodingFailed, store: name, key: row.string(at: 0), detail: "the stored setting is damaged")
                }
                result[row.string(at: 0)] = value
            }
        }
        return result
    }

    // MARK: Changes

    /// The changes of the settings from now on, in order, until the stream is dropped.
    ///
    /// ```swift
    /// Task { for await change in settings.changes() where change.name == "theme" { applyTheme() } }
    /// ```
    ///
    /// Writes through this store are told as they commit. Other commits to the settings' table — raw
    /// SQL, another ``SettingsStore`` or `Database` on the file, another process — reach this store
    /// through the database's change observation (``Database/changes(in:)``; other processes within
    /// ``Configuration/externalChangeLatency``); the store then reads its table again and tells one
    /// change per setting whose stored value differs from what it last knew, in name order. The
    /// database's observation runs only while a stream or callback is registered.
    public func changes() -> AsyncStream<SettingsChange> {
        let (stream, continuation) = AsyncStream<SettingsChange>.makeStream()
        let token = addObserver { continuation.yield($0) }
        continuation.onTermination = { [weak self] _ in self?.removeObserver(token) }
        return stream
    }

    /// Calls `observer` after each change commits (see ``changes()``): on the writing thread for writes
    /// through this store, on a background queue for the others; until the returned observation is
    /// cancelled or released.
    public func onChange(_ observer: @escaping @Sendable (SettingsChange) -> Void) -> SettingsObservation {
        let token = addObserver(observer)
        return SettingsObservation { [weak self] in self?.removeObserver(token) }
    }

    /// Registers `observer`; the first one starts following other writers from a fresh snapshot.
    private func addObserver(_ observer: @escaping @Sendable (SettingsChange) -> Void) -> Int {
        state.serializingWrites {
            let (token, isFirst) = state.addObserver(observer)
            if isFirst {
                state.setSnapshot(try? storedValues())
                follower.start { [weak self] in self?.refresh() }
            }
            return token
        }
    }

    private func removeObserver(_ token: Int) {
        if state.removeObserver(token) { follower.stop() }
    }

    /// After a commit this store did not make: tells what differs from the last known stored values.
    private func refresh() {
        state.serializingWrites {
            guard state.isFollowing, let current = try? storedValues() else { return }
            let previous = state.setSnapshot(current) ?? current
            let names = Set(previous.keys).union(current.keys).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            publishChanges(
                names.compactMap { name in
                    previous[name] == current[name] ? nil : SettingsChange(name: name, newValue: current[name])
                })
        }
    }

    /// Tells observers about `changes`. Every write of this store calls it after committing; it is the
    /// one entry point, so database-wide change observation can drive it for writes made elsewhere.
    func publishChanges(_ changes: [SettingsChange]) {
        for change in changes { state.notify(change) }
    }

    /// Runs `body` in one write transaction, then publishes the changes it reports.
    private func write(_ body: (Connection) throws -> [SettingsChange]) throws {
        // Publishing under the state's write lock keeps notifications in commit order across threads.
        try state.serializingWrites {
            let changes = try database.write { db in
                let changes = try body(db)
                // Told below: the follower skips this commit.
                database.observation.tagCurrentTransaction(ObjectIdentifier(state))
                return changes
            }
            state.applyToSnapshot(changes)
            publishChanges(changes)
        }
    }

    deinit { follower.stop() }
}

/// A registration made by ``SettingsStore/onChange(_:)``: cancel it, or release it, to stop the calls.
public final class SettingsObservation: Sendable {
    private let cancellation: @Sendable () -> Void

    init(_ cancellation: @escaping @Sendable () -> Void) { self.cancellation = cancellation }

    /// Stops the calls.
    public func cancel() { cancellation() }

    deinit { cancellation() }
}

/// The settings store's in-memory state: registered defaults, observers and, while observed, the stored
/// values last told, behind locks.
final class SettingsState: @unchecked Sendable {
    private let lock = NSLock()
    private let writeLock = NSLock()
    private var defaults: [String: DocumentValue] = [:]
    private var observers: [Int: @Sendable (SettingsChange) -> Void] = [:]
    private var nextToken = 0
    private var snapshot: [String: DocumentValue]?

    func register(_ values: [String: DocumentValue]) {
        lock.withLock { defaults.merge(values) { _, new in new } }
    }

    func registeredDefault(_ name: String) -> DocumentValue? { lock.withLock { defaults[name] } }

    func registeredDefaults() -> [String: DocumentValue] { lock.withLock { defaults } }

    /// The new observer's token, and whether it is the only one.
    func addObserver(_ observer: @escaping @Sendable (SettingsChange) -> Void) -> (Int, Bool) {
        lock.withLock {
            nextToken += 1
            observers[nextToken] = observer
            return (nextToken, observers.count == 1)
        }
    }

    /// Removes an observer; true when it was the last (following stops, the snapshot goes).
    func removeObserver(_ token: Int) -> Bool {
        lock.withLock {
            guard observers.removeValue(forKey: token) != nil, observers.isEmpty else { return false }
            snapshot = nil
            return true
        }
    }

    var isFollowing: Bool { lock.withLock { snapshot != nil } }

    /// Replaces the snapshot; returns the previous one.
    @discardableResult
    func setSnapshot(_ values: [String: DocumentValue]?) -> [String: DocumentValue]? {
        lock.withLock {
            defer { snapshot = values }
            return snapshot
        }
    }

    /// Records this store's own changes in the snapshot, while there is one.
    func applyToSnapshot(_ changes: [SettingsChange]) {
        lock.withLock {
            guard snapshot != nil else { return }
            for change in changes { snapshot?[change.name] = change.newValue }
        }
    }

    func notify(_ change: SettingsChange) {
        let current = lock.withLock { observers.sorted { $0.key < $1.key }.map(\.value) }
        for observer in current { observer(change) }
    }

    func serializingWrites<T>(_ body: () throws -> T) rethrows -> T {
        try writeLock.withLock(body)
    }
}
