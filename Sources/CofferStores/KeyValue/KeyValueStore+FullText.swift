// A full-text index over one text field of a key-value store's values.
//
// The store already writes a row per (item, indexed field) into its index table (`kv-index:N`) in the
// same transaction as the item. An FTS4 table `kv-fts:N` (tokenize=coffer unless the caller chooses another
// tokenizer, docid = the item's id) is kept
// in step with that table's rows for the chosen field by triggers, so every write path of the store
// (put, batch, delete, prefix delete, clear, expiry purge, eviction) updates it without Swift-side
// bookkeeping. The index table is WITHOUT ROWID, so the FTS table keeps its own copy of the text.

import CofferEngine
import CofferRecords
import CofferSearch

extension KeyValueStore {
    /// The FTS4 table of this store's full-text index.
    var fullTextTable: String { SQLIdentifier.quote("kv-fts:" + name) }

    /// Creates (once) a full-text index over `field`, a text field declared in the store's
    /// ``KeyValueStore/Configuration/indexes``, and fills it from the items already stored. `tokenizer`
    /// splits the text as a `@Table` index's does (``FullTextTokenizer/pinyin`` for names searched with
    /// ``FullTextPattern/pinyin(_:)``); it is chosen once, when the index is created.
    ///
    /// ```swift
    /// let store = try KeyValueStore(database: database, name: "notes", configuration: .init(indexes: [Note.text]))
    /// try store.enableFullTextSearch(on: Note.text)
    /// let hits = try store.search(Note.self, matching: .searchBox("会议 notes"))
    /// ```
    public func enableFullTextSearch<Root>(
        on field: KeyValueIndexField<Root, String>, tokenizer: FullTextTokenizer = .coffer
    ) throws {
        let fts = fullTextTable
        let index = schema.index
        let name = try SQLFragment.literal(.text(field.name))
        let trigger = { (suffix: String) in SQLIdentifier.quote("kv-fts-" + suffix + ":" + self.name) }
        let script = """
            CREATE VIRTUAL TABLE \(fts) USING fts4(text, tokenize=\(tokenizer.declaration));
            INSERT INTO \(fts)(docid, text) SELECT item_id, value FROM \(index) WHERE field = \(name);
            CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(index) WHEN new.field = \(name)
            BEGIN INSERT INTO \(fts)(docid, text) VALUES (new.item_id, new.value); END;
            CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(index) WHEN old.field = \(name)
            BEGIN DELETE FROM \(fts) WHERE docid = old.item_id; END;
            CREATE TRIGGER \(trigger("update")) AFTER UPDATE ON \(index) WHEN old.field = \(name) OR new.field = \(name)
            BEGIN
                DELETE FROM \(fts) WHERE docid = old.item_id;
                INSERT INTO \(fts)(docid, text) SELECT new.item_id, new.value WHERE new.field = \(name);
            END;
            """
        let exists = "SELECT count(*) FROM sqlite_master WHERE name = ?"
        try database.write { db in
            guard try db.fetchValue(Int.self, sql: exists, arguments: ["kv-fts:" + self.name]) == 0 else { return }
            try db.executeScript(script)
        }
    }

    /// The values of `bucket` whose indexed text matches `pattern`, as (key, value) pairs in item order,
    /// at most `limit`. Expired items are left out. Needs ``enableFullTextSearch(on:)`` first.
    public func search<Value: Decodable & Sendable>(
        _ type: Value.Type, matching pattern: FullTextPattern, in bucket: String = KeyValueStore.defaultBucket,
        limit: Int = 100
    ) throws -> [(key: String, value: Value)] {
        if pattern.matchesNothing { return [] }
        let found = try pattern.membership(of: "id", in: fullTextTable)
        let query = "SELECT key FROM \(schema.items) WHERE bucket = ? AND \(found.sql) ORDER BY id LIMIT ?"
        let arguments: [DatabaseValue] = [.text(bucket)] + found.arguments + [.integer(Int64(max(limit, 0)))]
        let keys = try database.read { db in
            try db.fetchAll(sql: query, arguments: StatementArguments(arguments)).compactMap { row -> String? in row["key"] }
        }
        return try keys.compactMap { key in try value(type, for: key, in: bucket).map { (key, $0) } }
    }
}
