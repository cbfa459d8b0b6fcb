import Foundation

/// Creates a store's tables, or brings a store written by an earlier layout up to date, at open.
///
/// Layout 1 (never in a release: see CHANGELOG's Unreleased section) kept the attribute rows in a table
/// keyed by `(doc_id, path, ordinal)` plus a `"doc-attr-by-value:N"` index on `(path, kind, value)`,
/// two B-tree inserts per attribute; its rows held NULL for null values, and document ids could be
/// reused. Layout 2 (``DocumentSchema``) is one `WITHOUT ROWID` table keyed by the search key and
/// `AUTOINCREMENT` ids. The old index's presence marks layout 1; the migration runs in the opening
/// write transaction (all or nothing): it keeps every document, id and bag membership and rebuilds the
/// attribute rows from the stored bodies. A read-only open leaves the file alone: layout 1 answers the
/// same queries through its index.
enum DocumentLayout {
    static func prepare(_ store: DocumentStore, in db: Connection) throws {
        let schema = store.schema
        let legacy = try db.fetchOne(
            sql: "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [schema.legacyIndexName])
        guard legacy != nil else { return try db.executeScript(schema.createScript) }
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

    /// Writes every document's attribute rows from its body, a thousand documents at a time (memory stays
    /// flat); a damaged body gets none (reading that document reports it).
    static func reindex(_ store: DocumentStore, in db: Connection) throws {
        let sql = "SELECT id, body FROM \(store.schema.documents) WHERE id > ? ORDER BY id LIMIT 1000"
        var last = Int64.min
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
                try store.insertAttributes(rows, id: id, in: db)
            }
        }
    }
}
