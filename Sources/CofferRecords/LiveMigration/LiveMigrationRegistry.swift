import CofferEngine
import Foundation

/// The live migrations of one ``Database`` and the setup every connection of it runs to take part in
/// them: attach each source file (read-only in practice: nothing ever writes it) and create each target
/// table's union view (see ``LiveMigrationTable``).
///
/// Connections set themselves up lazily, before their next transaction, whenever the set of migrations
/// changed (CofferEngine's `ConnectionSetup`): `ATTACH` and `DETACH` cannot run inside a transaction.
final class LiveMigrationRegistry: @unchecked Sendable {
    /// Where a source file is attached, and its key when it is encrypted.
    struct Attachment {
        let schema: String
        let path: String
        let key: AttachedFileKey?
    }

    /// One running migration: its union and, for a source file, where the file is attached.
    struct Entry {
        let table: LiveMigrationTable
        let attachment: Attachment?
        let migration: LiveMigration
    }

    private let lock = NSLock()
    // Guarded by `lock`.
    private var entries: [String: Entry] = [:]
    private var nextSchemaNumber = 0
    private weak var setup: ConnectionSetup?

    /// The schema names source files are attached under start with this.
    static let schemaPrefix = "coffer_source_"

    /// The registry of `database`, created (and its setup step installed) on first use.
    static func of(_ database: Database) -> LiveMigrationRegistry? {
        let setup = database.connectionSetup
        var created = false
        let registry = setup.attachment { () -> LiveMigrationRegistry in
            created = true
            return LiveMigrationRegistry()
        }
        if created, let registry {
            registry.lock.withLock { registry.setup = setup }
            setup.install { [weak registry] connection in try registry?.setUp(connection) }
        }
        return registry
    }

    /// The migration filling `table`, if one runs.
    func migration(of table: String) -> LiveMigration? { lock.withLock { entries[table]?.migration } }

    /// A schema name for a newly attached source file.
    func newSchemaName() -> String {
        lock.withLock {
            nextSchemaNumber += 1
            return Self.schemaPrefix + String(nextSchemaNumber)
        }
    }

    /// Starts reading `entry.table` through its union on every connection.
    func add(_ entry: Entry) {
        let setup = lock.withLock {
            entries[entry.table.target] = entry
            return self.setup
        }
        setup?.invalidate()
    }

    /// Stops reading `table` through a union: connections drop its view and detach its source.
    func remove(_ table: String) {
        let setup = lock.withLock {
            entries[table] = nil
            return self.setup
        }
        setup?.invalidate()
    }

    /// Brings `connection`'s views and attached sources in line with the running migrations.
    func setUp(_ connection: Connection) throws {
        let entries = lock.withLock { self.entries }
        var views = connection.liveMigrationTables
        let stale = views.filter { name, table in entries[name]?.table !== table }.map(\.key)
        let attached = try connection.fetchAll(sql: "PRAGMA database_list").compactMap { row -> String? in
            let name: String? = row["name"]
            return name.flatMap { $0.hasPrefix(Self.schemaPrefix) ? $0 : nil }
        }
        var wanted: [String: Attachment] = [:]
        for entry in entries.values { if let attachment = entry.attachment { wanted[attachment.schema] = attachment } }
        let detaching = attached.filter { wanted[$0] == nil }
        let attaching = wanted.filter { !attached.contains($0.key) }
        let creating = entries.filter { views[$0.key] == nil || stale.contains($0.key) }
        guard !stale.isEmpty || !detaching.isEmpty || !attaching.isEmpty || !creating.isEmpty else { return }

        // Readers are `query_only`, which forbids TEMP views too: lifted for these statements alone.
        let queryOnly = try connection.fetchValue(Int.self, sql: "PRAGMA query_only") == 1
        if queryOnly { try connection.execute(sql: "PRAGMA query_only = OFF") }
        defer { if queryOnly { try? connection.execute(sql: "PRAGMA query_only = ON") } }
        for name in stale {
            try connection.execute(sql: "DROP VIEW IF EXISTS temp." + (try SQLIdentifier.validated(name)))
            views[name] = nil
        }
        for schema in detaching { try connection.execute(sql: "DETACH DATABASE " + (try SQLIdentifier.validated(schema))) }
        for attachment in attaching.values { try Self.attach(attachment, connection) }
        for (name, entry) in creating {
            try connection.execute(sql: try entry.table.createViewSQL)
            views[name] = entry.table
        }
        connection.liveMigrationTables = views
    }

    /// Attaches a source file: under its key (see CofferEngine's `AttachedFileKey`), or as plaintext (`KEY ''`:
    /// on an encrypted connection an ATTACH without a key would use the connection's own key).
    static func attach(_ attachment: Attachment, _ connection: Connection) throws {
        let path = attachment.path
        guard FileManager.default.fileExists(atPath: path) else {
            throw CofferError(code: .fileNotFound, message: "no live migration source at \(path)")
        }
        let schema = try SQLIdentifier.validated(attachment.schema)
        if let key = attachment.key {
            try connection.attach(path, as: schema, fileKey: key)
        } else {
            try connection.execute(sql: "ATTACH DATABASE ? AS " + schema + " KEY ''", arguments: [path])
        }
    }
}
