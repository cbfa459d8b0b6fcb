import CofferEngine
import CofferRecords

/// The tables of one store and the SQL that every operation runs, built once per store.
///
/// Layout, for a store named `N` (names are quoted, so `N` may be any string):
///
/// - `"kv:N"` — one row per item. `id` is a stable rowid the index table points at (a re-`put` updates the
///   row in place, so `created_at` survives); `(bucket, key)` is unique. `value` and `metadata` hold
///   TEXT/INTEGER/REAL for plain values and a BLOB from the store's coder otherwise. Times are REAL
///   seconds since 1970, like every `Date` in Coffer. With a value compression declared, `value` holds
///   what `coffer_compress` stores (``CompressedValue``'s format) and is read through `coffer_decompress`. `accessed_at` feeds LRU eviction; `size` is the
///   byte count of value plus metadata, for byte caps.
/// - `"kv-index:N"` — one row per (item, indexed field) whose extractor returned a value, with the
///   bucket copied in so that "field F in bucket B ordered by value" is a single index range scan.
/// - An `AFTER DELETE` trigger removes an item's index rows whatever deleted it (a key, a prefix, a
///   purge, an eviction, or raw SQL), so the two tables cannot drift apart.
///
/// Each schema object has its own prefix before the store name: tables and indexes share SQLite's
/// namespace, and no store name can make one prefix look like another.
struct KeyValueSchema: Sendable {
    let items: String
    let index: String
    let createScript: String

    let selectByKey: String
    let selectID: String
    let insert: String
    let update: String
    let deleteByKey: String
    let deleteIndexRows: String
    let insertIndexRow: String
    let touch: String
    /// Whether values are read through `coffer_decompress` (the store declares a value compression).
    let readsCompressed: Bool

    init(storeName: String, compression: ColumnCompression? = nil) {
        let items = SQLIdentifier.quote("kv:" + storeName)
        let index = SQLIdentifier.quote("kv-index:" + storeName)
        self.items = items
        self.index = index
        let q = { (prefix: String) in SQLIdentifier.quote(prefix + storeName) }
        createScript = """
            CREATE TABLE IF NOT EXISTS \(items) (
                id INTEGER PRIMARY KEY,
                bucket TEXT NOT NULL,
                key TEXT NOT NULL,
                value,
                metadata,
                created_at REAL NOT NULL,
                updated_at REAL NOT NULL,
                accessed_at REAL NOT NULL,
                expires_at REAL,
                size INTEGER NOT NULL,
                UNIQUE (bucket, key)
            );
            CREATE INDEX IF NOT EXISTS \(q("kv-by-updated:")) ON \(items)(updated_at);
            CREATE INDEX IF NOT EXISTS \(q("kv-by-accessed:")) ON \(items)(accessed_at);
            CREATE INDEX IF NOT EXISTS \(q("kv-by-expiry:")) ON \(items)(expires_at) WHERE expires_at IS NOT NULL;
            CREATE TABLE IF NOT EXISTS \(index) (
                item_id INTEGER NOT NULL,
                field TEXT NOT NULL,
                bucket TEXT NOT NULL,
                value,
                PRIMARY KEY (item_id, field)
            ) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS \(q("kv-index-by-value:")) ON \(index)(field, bucket, value);
            CREATE TRIGGER IF NOT EXISTS \(q("kv-cascade:")) AFTER DELETE ON \(items)
            BEGIN
                DELETE FROM \(index) WHERE item_id = old.id;
            END;
            """
        readsCompressed = compression != nil
        // `coffer_compress` stores a value that does not shrink as it is; `.off` writes plain.
        let written = compression?.storedParameterSQL ?? "?"
        selectByKey = """
            SELECT \(StoredItem.columns(decompressing: readsCompressed)) FROM \(items)
            WHERE bucket = ? AND key = ? AND (expires_at IS NULL OR expires_at > ?)
            """
        selectID = "SELECT id FROM \(items) WHERE bucket = ? AND key = ?"
        insert = """
            INSERT INTO \(items)(bucket, key, value, metadata, created_at, updated_at, accessed_at, expires_at, size)
            VALUES (?, ?, \(written), ?, ?, ?, ?, ?, ?)
            """
        update = """
            UPDATE \(items) SET value = \(written), metadata = ?, updated_at = ?, accessed_at = ?, expires_at = ?, size = ?
            WHERE id = ?
            """
        deleteByKey = "DELETE FROM \(items) WHERE bucket = ? AND key = ?"
        deleteIndexRows = "DELETE FROM \(index) WHERE item_id = ?"
        insertIndexRow = "INSERT INTO \(index)(item_id, field, bucket, value) VALUES (?, ?, ?, ?)"
        touch = "UPDATE \(items) SET accessed_at = max(accessed_at, ?) WHERE bucket = ? AND key = ?"
    }

    /// The condition that hides expired items, with one `?` for now.
    static let notExpired = "(expires_at IS NULL OR expires_at > ?)"

    /// `(bucket = ?)`, or nothing for all buckets.
    static func bucketCondition(_ bucket: String?, column: String = "bucket") -> (sql: String, arguments: StatementArguments) {
        guard let bucket else { return ("1", []) }
        return ("\(column) = ?", [bucket])
    }
}

/// Key prefixes as ranges, so that `%`, `_` and `\` in a prefix are plain characters and the
/// `(bucket, key)` index does the work.
///
/// SQLite compares TEXT with the BINARY collation, i.e. by UTF-8 bytes, and UTF-8 byte order is Unicode
/// scalar order. So the keys that start with `p` are exactly those with `p <= key < successor(p)`, where
/// the successor increments the last scalar of `p` (dropping trailing U+10FFFF and carrying, skipping
/// the surrogate range). A prefix with no successor (empty, or only U+10FFFF) has no upper bound.
enum KeyPrefixRange {
    static func upperBound(of prefix: String) -> String? {
        var scalars = Array(prefix.unicodeScalars)
        while let last = scalars.popLast() {
            var next = last.value + 1
            if next == 0xD800 { next = 0xE000 }
            if let successor = Unicode.Scalar(next) {
                scalars.append(successor)
                var result = String.UnicodeScalarView()
                result.append(contentsOf: scalars)
                return String(result)
            }
        }
        return nil
    }

    /// The SQL condition and arguments selecting keys that start with `prefix`.
    static func condition(_ prefix: String, column: String = "key") -> (sql: String, arguments: StatementArguments) {
        if let upper = upperBound(of: prefix) {
            return ("(\(column) >= ? AND \(column) < ?)", [prefix, upper])
        }
        return ("\(column) >= ?", [prefix])
    }
}

/// The stores whose values may be compressed, by name: a row is written (with existing BLOB values whose
/// first byte is one of ``CompressedValue``'s markers escaped, as `coffer_compress` would store them) the
/// first time a store opens with a value compression, so that no value written before reads as compressed.
enum KeyValueCompressionMark {
    static let table = "coffer_kv_value_compression"

    /// Marks `schema`'s store in `db`, escaping its plain BLOBs that start with 0xC0…0xC2, once.
    static func mark(_ storeName: String, schema: KeyValueSchema, in db: Connection) throws {
        try db.execute(sql: "CREATE TABLE IF NOT EXISTS \(table)(store TEXT PRIMARY KEY) WITHOUT ROWID")
        let marked = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(table) WHERE store = ?", arguments: [storeName])
        guard marked == 0 else { return }
        try db.execute(
            sql: """
                UPDATE \(schema.items) SET value = CAST(X'C2' || value AS BLOB)
                WHERE typeof(value) = 'blob' AND substr(value, 1, 1) BETWEEN X'C0' AND X'C2'
                """)
        try db.execute(sql: "INSERT INTO \(table)(store) VALUES (?)", arguments: [storeName])
    }
}
