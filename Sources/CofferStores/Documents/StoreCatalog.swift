import CofferEngine
import CofferRecords

/// The named stores of a database, found by their tables' prefixes, and dropping them
/// (YTKKeyValueStore's `isTableExists` and `dropTable`).
///
/// ```swift
/// try KeyValueStore.storeNames(in: database)         // ["images", "users"]
/// try DocumentStore.exists(named: "people", in: database)
/// try DocumentStore.drop(named: "people", in: database)  // its documents, attribute index and bags
/// ```
enum StoreCatalog {
    /// Throws ``DocumentError/Reason/invalidName`` for a name SQL text cannot carry (it contains NUL).
    static func validate(name: String, store: String) throws {
        if name.utf8.contains(0) {
            throw DocumentError(reason: .invalidName, store: store, key: nil, detail: "a name cannot contain NUL")
        }
    }

    /// The store names whose main table is `prefix + name`, sorted by bytes.
    static func names(prefix: String, in database: Database) throws -> [String] {
        let range = KeyPrefixRange.condition(prefix, column: "name")
        let sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND \(range.sql) ORDER BY name"
        return try database.read { db in
            try db.fetchAll(sql: sql, arguments: range.arguments).map {
                String(try $0.decode(String.self, at: 0).dropFirst(prefix.count))
            }
        }
    }

    static func exists(table: String, in database: Database) throws -> Bool {
        try database.read { db in
            try db.fetchOne(sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [table]) != nil
        }
    }

    /// Drops `tables` (their indexes and triggers go with them) in one transaction; true when the first
    /// existed.
    static func drop(tables: [String], in database: Database) throws -> Bool {
        try database.write { db in
            let existed =
                try db.fetchOne(
                    sql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [tables[0]]) != nil
            for table in tables { try db.execute(sql: "DROP TABLE IF EXISTS \(SQLIdentifier.quote(table))") }
            return existed
        }
    }
}

extension DocumentStore {
    /// The names of the document stores in `database`, sorted.
    public static func storeNames(in database: Database) throws -> [String] {
        try StoreCatalog.names(prefix: "doc:", in: database)
    }

    /// True when `database` holds a document store called `name`.
    public static func exists(named name: String, in database: Database) throws -> Bool {
        try StoreCatalog.exists(table: "doc:" + name, in: database)
    }

    /// Drops the document store called `name` with its attribute index, bags and full-text index, in one
    /// transaction; returns whether it existed. Open ``DocumentStore`` instances of it fail from then on
    /// (re-open to recreate it empty).
    @discardableResult
    public static func drop(named name: String, in database: Database) throws -> Bool {
        try StoreCatalog.validate(name: name, store: name)
        return try StoreCatalog.drop(
            tables: ["doc:" + name, "doc-attr:" + name, "doc-path:" + name, "doc-bag:" + name, "doc-fts:" + name],
            in: database)
    }
}

extension KeyValueStore {
    /// The names of the key-value stores in `database`, sorted.
    public static func storeNames(in database: Database) throws -> [String] {
        try StoreCatalog.names(prefix: "kv:", in: database)
    }

    /// True when `database` holds a key-value store called `name` (YTKKeyValueStore's `isTableExists`).
    public static func exists(named name: String, in database: Database) throws -> Bool {
        try StoreCatalog.exists(table: "kv:" + name, in: database)
    }

    /// Drops the key-value store called `name` with its index table and full-text index, in one transaction (YTKKeyValueStore's
    /// `dropTable`); returns whether it existed. The decoded-object cache that open instances share is
    /// emptied; those instances fail from then on (re-open to recreate the store empty).
    @discardableResult
    public static func drop(named name: String, in database: Database) throws -> Bool {
        try StoreCatalog.validate(name: name, store: name)
        let existed = try StoreCatalog.drop(
            tables: ["kv:" + name, "kv-index:" + name, "kv-fts:" + name], in: database)
        KeyValueStoreRegistry.shared.resources(database: database, name: name, costLimit: 0).0.invalidate(.everything)
        return existed
    }
}
