import CofferEngine
import CofferRecords
import Foundation

/// Creates a store's tables, or brings a store written by an earlier layout up to date, at open.
///
/// Layout 1 (never in a release: see CHANGELOG's Unreleased section) kept the attribute rows in a table
/// keyed by `(doc_id, path, ordinal)` plus a `"doc-attr-by-value:N"` index on `(path, kind, value)`,
/// two B-tree inserts per attribute; its rows held NULL for null values, and document ids could be
/// reused. Layout 2 is one `WITHOUT ROWID` table keyed by the search key `(path, kind, value, doc_id,
/// ordinal)` and `AUTOINCREMENT` ids; layout 3 (``DocumentSchema``) keys the same table by a path id
/// from a `"doc-path:N"` table instead of the path's text. The old index's presence marks layout 1, an
/// attribute table without a paths table layout 2. Each migration runs in the opening write
/// transaction (all or nothing) and keeps every document, id and bag membership: layout 1's attribute
/// rows are rebuilt from the stored bodies, layout 2's are copied with their path replaced by its id.
/// A read-only open leaves the file alone and reads the old layout through its `path` column
/// (``readingSchema(storeName:compression:in:)``).
enum DocumentLayout {
    static func prepare(_ store: DocumentStore, in db: Connection) throws {
        let schema = store.schema
        let legacy = try db.fetchOne(
            sql: "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [schema.legacyIndexName])
        guard legacy != nil else {
            if try keepsPathText(storeName: store.name, in: db) { return try migrateLayoutTwo(store, in: db) }
            return try db.executeScript(schema.createScript)
        }
        let moved = SQLIdentifier.quote("doc-migrating:" + store.name)
        try db.executeScript(
            """
            DROP TRIGGER IF EXISTS \(schema.cascade);
            DROP TABLE \(schema.attributes);
            ALTER TABLE \(schema.documents) RENAME TO \(moved);
            """)
        try db.executeScript(schema.createScript)
        try db.executeScript(
            """
            INSERT INTO \(schema.documents)(id, key, body, created_at, updated_at)
                SELECT id, key, body, created_at, updated_at FROM \(moved);
            DROP TABLE \(moved);
            """)
        try reindex(store, in: db)
    }

    /// The schema a read-only open reads `storeName` with: layout 3's, or the `path` column of an
    /// earlier layout's attribute table.
    static func readingSchema(storeName: String, compression: ColumnCompression?, in db: Connection) throws
        -> DocumentSchema
    {
        DocumentSchema(
            storeName: storeName, pathIDs: !(try keepsPathText(storeName: storeName, in: db)), compression: compression)
    }

    /// True when the store has an attribute table but no paths table: its rows hold the path's text
    /// (layout 2, or layout 1).
    private static func keepsPathText(storeName: String, in db: Connection) throws -> Bool {
        let sql = "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?"
        return try db.fetchOne(sql: sql, arguments: ["doc-attr:" + storeName]) != nil
            && db.fetchOne(sql: sql, arguments: ["doc-path:" + storeName]) == nil
    }

    /// Moves layout 2's attribute rows into layout 3's table, in the old table's key order (paths get
    /// their ids in text order, so the new keys arrive in order too).
    private static func migrateLayoutTwo(_ store: DocumentStore, in db: Connection) throws {
        let schema = store.schema
        let moved = SQLIdentifier.quote("doc-migrating:" + store.name)
        try db.execute(sql: "ALTER TABLE \(schema.attributes) RENAME TO \(moved)")
        try db.executeScript(schema.createScript)
        try db.executeScript(
            """
            INSERT INTO \(schema.paths)(path) SELECT DISTINCT path FROM \(moved) ORDER BY path;
            INSERT INTO \(schema.attributes)(path_id, kind, value, doc_id, ordinal, folded)
                SELECT p.id, m.kind, m.value, m.doc_id, m.ordinal, m.folded
                FROM \(moved) AS m JOIN \(schema.paths) AS p ON p.path = m.path;
            DROP TABLE \(moved);
            """)
    }

    /// Writes every document's attribute rows from its body, a thousand documents at a time (memory stays
    /// flat); a damaged body gets none (reading that document reports it).
    static func reindex(_ store: DocumentStore, in db: Connection) throws {
        let sql = "SELECT id, \(store.schema.body("body")) FROM \(store.schema.documents) WHERE id > ? ORDER BY id LIMIT 1000"
        var last = Int64.min
        let paths = AttributePaths(schema: store.schema)
        while true {
            var page: [(Int64, Data)] = []
            try db.forEachRow(sql: sql, arguments: [last]) { page.append(($0.int64(at: 0), $0.data(at: 1))) }
            guard let end = page.last?.0 else { return }
            last = end
            for (id, body) in page {
                guard let value = DocumentBinary.decode(body),
                    let rows = try? AttributeFlattener.attributes(
                        of: value, maximumDepth: DocumentBinary.maximumDepth, maximumCount: .max, store: store.name, key: nil)
                else { continue }
                try store.insertAttributes(rows, id: id, in: db, paths: paths)
            }
        }
    }
}
