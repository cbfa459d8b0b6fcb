// A full-text index over the strings at one attribute path of a document store's documents.
//
// The store already writes a row per (document, attribute path, ordinal) into its attribute index
// (`doc-attr:N`) in the same transaction as the document, and only ever inserts and deletes those rows
// (a re-put deletes the rows that changed and inserts their new values). An FTS4 table `doc-fts:N`
// (tokenize=coffer unless the caller chooses another tokenizer) is kept in step with the rows of the
// chosen path that hold a string, by triggers, so every write path (put, batch, delete, a re-put that
// changes or drops the text) updates it without Swift-side bookkeeping, as the key-value store's index
// does. One document may hold several strings at the path (`tags[]`): each is its own FTS row, with
// docid `doc_id << 20 | ordinal` (the first 2^20 elements of an array are indexed), so a trigger finds
// an FTS row by docid, never by scanning. The attribute index is WITHOUT ROWID, so the FTS table keeps
// its own copy of the text.

import CofferEngine
import CofferRecords
import CofferSearch
import Foundation

extension DocumentStore {
    /// The FTS4 table of this store's full-text index.
    var fullTextTable: String { SQLIdentifier.quote("doc-fts:" + name) }

    /// How many ordinals (array elements) of one document the index holds: its docids are
    /// `doc_id << 20 | ordinal`.
    static let fullTextOrdinalBits = 20

    /// Creates (once) a full-text index over the strings at `path` (a member such as `"title"`, a nested
    /// `"address.city"`, or every element of an array, `"tags[]"`), and fills it from the documents
    /// already stored. `tokenizer` splits the text as a `@Table` index's does (``FullTextTokenizer/pinyin``
    /// for names searched with ``FullTextPattern/pinyin(_:)``); path and tokenizer are chosen once, when
    /// the index is created: a later call does nothing.
    ///
    /// ```swift
    /// let contacts = try DocumentStore(database: database, name: "contacts")
    /// try contacts.enableFullTextSearch(on: "name", tokenizer: .pinyin)
    /// try contacts.put(["name": "张三", "city": "北京"], for: "c1")
    /// let found = try contacts.search(matching: .pinyin("zhangs"))  // [c1]
    /// ```
    public func enableFullTextSearch(on path: DocumentPath, tokenizer: FullTextTokenizer = .coffer) throws {
        let fts = fullTextTable
        let attributes = schema.attributes
        let string = AttributeKind.string.rawValue
        let bits = Self.fullTextOrdinalBits
        let trigger = { (suffix: String) in SQLIdentifier.quote("doc-fts-" + suffix + ":" + self.name) }
        let exists = "SELECT count(*) FROM sqlite_master WHERE name = ?"
        try database.write { db in
            guard try db.fetchValue(Int.self, sql: exists, arguments: ["doc-fts:" + self.name]) == 0 else { return }
            // The path's id, inserted if no document has held it yet, is fixed from then on.
            let pathID = try AttributePaths(schema: schema).id(for: path.description, in: db)
            let row = { (side: String) in
                "\(side).path_id = \(pathID) AND \(side).kind = \(string) AND \(side).ordinal < \(1 << bits)"
            }
            let docid = { (side: String) in "(\(side).doc_id << \(bits)) | \(side).ordinal" }
            try db.executeScript(
                """
                CREATE VIRTUAL TABLE \(fts) USING fts4(text, tokenize=\(tokenizer.declaration));
                INSERT INTO \(fts)(docid, text) SELECT \(docid("a")), a.value FROM \(attributes) AS a WHERE \(row("a"));
                CREATE TRIGGER \(trigger("insert")) AFTER INSERT ON \(attributes) WHEN \(row("new"))
                BEGIN INSERT INTO \(fts)(docid, text) VALUES (\(docid("new")), new.value); END;
                CREATE TRIGGER \(trigger("delete")) AFTER DELETE ON \(attributes) WHEN \(row("old"))
                BEGIN DELETE FROM \(fts) WHERE docid = \(docid("old")); END;
                CREATE TRIGGER \(trigger("update")) AFTER UPDATE ON \(attributes) WHEN \(row("old")) OR \(row("new"))
                BEGIN
                    DELETE FROM \(fts) WHERE docid = \(docid("old"));
                    INSERT INTO \(fts)(docid, text) SELECT \(docid("new")), new.value WHERE \(row("new"));
                END;
                """)
        }
    }

    /// The documents whose indexed text matches `pattern`, with their keys, in the order they were first
    /// stored, at most `limit`. A document with several matching strings (array elements) comes once.
    /// Needs ``enableFullTextSearch(on:tokenizer:)`` first.
    ///
    /// ```swift
    /// let hits = try contacts.search(matching: .pinyin("zs"), limit: 20)
    /// ```
    public func search(matching pattern: FullTextPattern, limit: Int = 100) throws -> [DocumentMatch] {
        if pattern.matchesNothing { return [] }
        let found = try pattern.membership(of: "id", in: fullTextTable, docid: "docid >> \(Self.fullTextOrdinalBits)")
        let query = "SELECT key, \(schema.body("body")) FROM \(schema.documents) WHERE \(found.sql) ORDER BY id LIMIT ?"
        let arguments = found.arguments + [.integer(Int64(max(limit, 0)))]
        let rows = try database.read { db in
            var rows: [(String, Data)] = []
            try db.forEachRow(sql: query, arguments: StatementArguments(arguments)) {
                rows.append(($0.string(at: 0), $0.data(at: 1)))
            }
            return rows
        }
        return try rows.map { DocumentMatch(key: $0.0, value: try decode($0.1, key: $0.0)) }
    }

    /// The documents whose indexed text matches `pattern`, decoded as `Value`, with their keys (see
    /// ``search(matching:limit:)``).
    ///
    /// ```swift
    /// let cards = try contacts.search(Card.self, matching: .pinyin("张s"))
    /// ```
    public func search<Value: Decodable>(
        _ type: Value.Type, matching pattern: FullTextPattern, limit: Int = 100
    ) throws -> [(key: String, value: Value)] {
        try search(matching: pattern, limit: limit).map {
            ($0.key, try DocumentCoding.decode(Value.self, from: $0.value, store: name, key: $0.key))
        }
    }
}
