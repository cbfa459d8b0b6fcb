import CofferEngine
import CofferRecords

/// The tables of one document store and the SQL its writes run, built once per store.
///
/// Layout 3, for a store named `N` (names are quoted, so `N` may be any string without NUL):
///
/// - `"doc:N"` — one row per document: a stable `id` (`AUTOINCREMENT`: never reused, so attribute rows
///   left behind by a raw SQL delete can never describe a later document), the unique `key`, the
///   ``DocumentBinary`` `body` (or, with a body compression, what `coffer_compress` stores of it; such a
///   store reads every body through `coffer_decompress`, which returns a plain body, whose first byte is the
///   format's version 1, as it is) and REAL timestamps. A re-`put` updates the row in place, so bag
///   memberships and `created_at` stay.
/// - `"doc-path:N"` — one row per attribute path ever written: a small integer `id` and the rendered
///   `path` (unique). Attribute rows carry the id, a byte or two, instead of the path's text.
/// - `"doc-attr:N"` — the attribute index (NanoStore's values table): one row per attribute path of
///   each document (`tags[]` once per element), with its path id, its ``AttributeKind``, its value in its
///   natural storage class (the column has no affinity, so nothing is converted) and its lowercased form
///   when that differs. `WITHOUT ROWID`, keyed by the search key `(path_id, kind, value, doc_id,
///   ordinal)`: one B-tree, so an attribute costs one insert, and every comparison, range and prefix
///   search is a range scan of the table itself (the path's id is a scalar subquery, evaluated once). A
///   document's own rows are found again from its body (the same flattening), not through a second
///   index: see ``DocumentStore/deleteAttributes(id:body:in:paths:)``.
/// - `"doc-bag:N"` — bag memberships `(bag, doc_id)`, with an index by document.
/// - An `AFTER DELETE` trigger removes a document's bag memberships whatever deleted it.
///
/// Layout 2 kept the path's text in each attribute row (no paths table); layout 1 had a `(doc_id, path,
/// ordinal)` key plus a `"doc-attr-by-value:N"` index. ``DocumentLayout`` migrates both at open; a store
/// opened read-only on either is read through its `path` column (``pathMatch``).
struct DocumentSchema: Sendable {
    let documents: String
    let paths: String
    let attributes: String
    let bags: String
    let cascade: String
    /// The name of layout 1's value index, unquoted (its presence marks a store to migrate).
    let legacyIndexName: String
    let createScript: String
    /// The condition selecting one path's attribute rows, its one argument the path's text.
    let pathMatch: String
    let selectPathID: String
    let insertPath: String
    let selectID: String
    let selectIDAndBody: String
    let insert: String
    let update: String
    let deleteDocument: String
    let deleteAttribute: String
    let deleteAttributesScanning: String
    let insertAttribute: String
    let selectBody: String

    /// Whether bodies are read through `coffer_decompress` (the store declares a body compression, `.off`
    /// included: bodies compressed before still read).
    let readsCompressed: Bool

    /// `column` (a document's `body`) as reads take it.
    func body(_ column: String) -> String { ColumnCompression.readSQL(column, decompressing: readsCompressed) }

    /// The SQL of layout 3, or with `pathIDs: false` the reads of a layout 1 or 2 store opened read-only.
    /// `compression` is how new bodies are written (nil or `.off`: plain).
    init(storeName: String, pathIDs: Bool = true, compression: ColumnCompression? = nil) {
        let q = { (prefix: String) in SQLIdentifier.quote(prefix + storeName) }
        let documents = q("doc:")
        let paths = q("doc-path:")
        let attributes = q("doc-attr:")
        let bags = q("doc-bag:")
        self.documents = documents
        self.paths = paths
        self.attributes = attributes
        self.bags = bags
        cascade = q("doc-cascade:")
        legacyIndexName = "doc-attr-by-value:" + storeName
        createScript = """
            CREATE TABLE IF NOT EXISTS \(documents) (
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                key TEXT NOT NULL UNIQUE,
                body BLOB NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            );
            CREATE TABLE IF NOT EXISTS \(paths) (
                id INTEGER PRIMARY KEY,
                path TEXT NOT NULL UNIQUE
            );
            CREATE TABLE IF NOT EXISTS \(attributes) (
                path_id INTEGER NOT NULL,
                kind INTEGER NOT NULL,
                value NOT NULL,
                doc_id INTEGER NOT NULL,
                ordinal INTEGER NOT NULL,
                folded TEXT,
                PRIMARY KEY (path_id, kind, value, doc_id, ordinal)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(bags) (
                bag TEXT NOT NULL,
                doc_id INTEGER NOT NULL,
                PRIMARY KEY (bag, doc_id)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(q("doc-bag-by-document:")) ON \(bags)(doc_id);
            CREATE TRIGGER IF NOT EXISTS \(cascade) AFTER DELETE ON \(documents)
            BEGIN
                DELETE FROM \(bags) WHERE doc_id = old.id;
            END;
            """
        pathMatch = pathIDs ? "path_id = (SELECT id FROM \(paths) WHERE path = ?)" : "path = ?"
        selectPathID = "SELECT id FROM \(paths) WHERE path = ?"
        insertPath = "INSERT INTO \(paths)(path) VALUES (?)"
        selectID = "SELECT id FROM \(documents) WHERE key = ?"
        readsCompressed = compression != nil
        let written = compression?.storedParameterSQL ?? "?"
        let readBody = ColumnCompression.readSQL("body", decompressing: readsCompressed)
        selectIDAndBody = "SELECT id, \(readBody) FROM \(documents) WHERE key = ?"
        insert = "INSERT INTO \(documents)(key, body, created_at, updated_at) VALUES (?, \(written), ?, ?)"
        update = "UPDATE \(documents) SET body = \(written), updated_at = ? WHERE id = ?"
        deleteDocument = "DELETE FROM \(documents) WHERE id = ?"
        deleteAttribute =
            "DELETE FROM \(attributes) WHERE path_id = ? AND kind = ? AND value = ? AND doc_id = ? AND ordinal = ?"
        deleteAttributesScanning = "DELETE FROM \(attributes) WHERE doc_id = ?"
        insertAttribute = "INSERT INTO \(attributes)(path_id, kind, value, doc_id, ordinal, folded) VALUES (?, ?, ?, ?, ?, ?)"
        selectBody = "SELECT \(readBody) FROM \(documents) WHERE key = ?"
    }
}
