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
/// - Each write is one transaction; observers are told after it commits, in write order.
public final class SettingsStore: Sendable {
    /// The store's name (its table is `"settings:<name>"`).
    public let name: String
    /// The database the settings live in.
    public let database: Database
    private let table: String
    private let state: SettingsState

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
        if !database.configuration.readOnly {
            let sql = "CREATE TABLE IF NOT EXISTS \(table) (key TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID"
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
        let sql = "SELECT key, value FROM \(table)"
        var result = state.registeredDefaults()
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

    /// The changes written through this store from now on, in order, until the stream is dropped.
    ///
    /// ```swift
    /// Task { for await change in settings.changes() where change.name == "theme" { applyTheme() } }
    /// ```
    public func changes() -> AsyncStream<SettingsChange> {
        let (stream, continuation) = AsyncStream<SettingsChange>.makeStream()
        let token = state.addObserver { continuation.yield($0) }
        continuation.onTermination = { [state] _ in state.removeObserver(token) }
        return stream
    }

    /// Calls `observer` after each change written through this store commits, on the writing thread,
    /// until the returned observation is cancelled or released.
    public func onChange(_ observer: @escaping @Sendable (SettingsChange) -> Void) -> SettingsObservation {
        let token = state.addObserver(observer)
        return SettingsObservation { [state] in state.removeObserver(token) }
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
            let changes = try database.write(body)
            publishChanges(changes)
        }
    }
}

/// A registration made by ``SettingsStore/onChange(_:)``: cancel it, or release it, to stop the calls.
public final class SettingsObservation: Sendable {
    private let cancellation: @Sendable () -> Void

    init(_ cancellation: @escaping @Sendable () -> Void) { self.cancellation = cancellation }

    /// Stops the calls.
    public func cancel() { cancellation() }

    deinit { cancellation() }
}

/// The settings store's in-memory state: registered defaults and observers, behind locks.
final class SettingsState: @unchecked Sendable {
    private let lock = NSLock()
    private let writeLock = NSLock()
    private var defaults: [String: DocumentValue] = [:]
    private var observers: [Int: @Sendable (SettingsChange) -> Void] = [:]
    private var nextToken = 0

    func register(_ values: [String: DocumentValue]) {
        lock.withLock { defaults.merge(values) { _, new in new } }
    }

    func registeredDefault(_ name: String) -> DocumentValue? { lock.withLock { defaults[name] } }

    func registeredDefaults() -> [String: DocumentValue] { lock.withLock { defaults } }

    func addObserver(_ observer: @escaping @Sendable (SettingsChange) -> Void) -> Int {
        lock.withLock {
            nextToken += 1
            observers[nextToken] = observer
            return nextToken
        }
    }

    func removeObserver(_ token: Int) {
        _ = lock.withLock { observers.removeValue(forKey: token) }
    }

    func notify(_ change: SettingsChange) {
        let current = lock.withLock { observers.sorted { $0.key < $1.key }.map(\.value) }
        for observer in current { observer(change) }
    }

    func serializingWrites<T>(_ body: () throws -> T) rethrows -> T {
        try writeLock.withLock(body)
    }
}
