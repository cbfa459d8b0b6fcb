/// The tables of one document store and the SQL its writes run, built once per store.
///
/// Layout, for a store named `N` (names are quoted, so `N` may be any string without NUL):
///
/// - `"doc:N"` — one row per document: a stable `id`, the unique `key`, the ``DocumentBinary`` `body`
///   and REAL timestamps. A re-`put` updates the row in place, so bag memberships and `created_at` stay.
/// - `"doc-attr:N"` — the attribute index (NanoStore's values table): one row per attribute path of
///   each document (`tags[]` once per element), with its ``AttributeKind``, its value in its natural
///   storage class (the column has no affinity, so nothing is converted) and its lowercased form when
///   that differs. `WITHOUT ROWID`, keyed by `(doc_id, path, ordinal)` so one document's attributes are
///   one range (for ordering and deletion).
/// - `"doc-attr-by-value:N"` on `(path, kind, value)`: every comparison, range and prefix search is a
///   range scan of this index, and it covers `doc_id` (part of the table's key), so a search never
///   reads the table.
/// - `"doc-bag:N"` — bag memberships `(bag, doc_id)`, with an index by document.
/// - An `AFTER DELETE` trigger removes a document's attributes and memberships whatever deleted it.
struct DocumentSchema: Sendable {
    static let documentsPrefix = "doc:"
    static let prefixes = ["doc:", "doc-attr:", "doc-attr-by-value:", "doc-bag:", "doc-bag-by-document:", "doc-cascade:"]

    let documents: String
    let attributes: String
    let bags: String
    let createScript: String
    let selectID: String
    let insert: String
    let update: String
    let deleteAttributes: String
    let insertAttribute: String
    let selectBody: String

    init(storeName: String) {
        let q = { (prefix: String) in SQLIdentifier.quote(prefix + storeName) }
        let documents = q("doc:")
        let attributes = q("doc-attr:")
        let bags = q("doc-bag:")
        self.documents = documents
        self.attributes = attributes
        self.bags = bags
        createScript = """
            CREATE TABLE IF NOT EXISTS \(documents) (
                id INTEGER PRIMARY KEY,
                key TEXT NOT NULL UNIQUE,
                body BLOB NOT NULL,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL
            );
            CREATE TABLE IF NOT EXISTS \(attributes) (
                doc_id INTEGER NOT NULL,
                path TEXT NOT NULL,
                ordinal INTEGER NOT NULL,
                kind INTEGER NOT NULL,
                value,
                folded TEXT,
                PRIMARY KEY (doc_id, path, ordinal)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(q("doc-attr-by-value:")) ON \(attributes)(path, kind, value);
            CREATE TABLE IF NOT EXISTS \(bags) (
                bag TEXT NOT NULL,
                doc_id INTEGER NOT NULL,
                PRIMARY KEY (bag, doc_id)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(q("doc-bag-by-document:")) ON \(bags)(doc_id);
            CREATE TRIGGER IF NOT EXISTS \(q("doc-cascade:")) AFTER DELETE ON \(documents)
            BEGIN
                DELETE FROM \(attributes) WHERE doc_id = old.id;
                DELETE FROM \(bags) WHERE doc_id = old.id;
            END;
            """
        selectID = "SELECT id FROM \(documents) WHERE key = ?"
        insert = "INSERT INTO \(documents)(key, body, created_at, updated_at) VALUES (?, ?, ?, ?)"
        update = "UPDATE \(documents) SET body = ?, updated_at = ? WHERE id = ?"
        deleteAttributes = "DELETE FROM \(attributes) WHERE doc_id = ?"
        insertAttribute = "INSERT INTO \(attributes)(doc_id, path, ordinal, kind, value, folded) VALUES (?, ?, ?, ?, ?, ?)"
        selectBody = "SELECT body FROM \(documents) WHERE key = ?"
    }
}
