import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The attribute table as one B-tree keyed by the search key: a document's rows are found again from
/// its body (replace, delete), orphans of raw SQL never count, and a store of the earlier two-B-tree
/// layout is migrated at open.
final class DocumentStoreLayoutTests: XCTestCase {
    /// The `sqlcipher` shell's defaults (passphrase `pw` as `Shell.sqlcipher` gives it).
    private static let shellConfiguration = Coffer.Configuration(
        encryption: .passphrase("pw"), cipher: CipherOptions(keyDerivation: .sqlcipher3))

    private func attributeRows(_ database: Database, _ store: String = "d") throws -> Int {
        try database.read { db in
            try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \(SQLIdentifier.quote("doc-attr:" + store))") ?? -1
        }
    }

    /// Values whose rows are hardest to find again: repeated paths in nested arrays, nulls and NaN (a
    /// key cannot hold NULL), dates far from 1970 (seconds that need not survive `Date` to the bit),
    /// NUL and emoji.
    private let awkward: Document = [
        "tags": ["a", "a", nil, .double(.nan)],
        "phones": [["kind": "home", "n": 1], ["kind": "home", "n": 1], ["kind": "work", "n": [1, [2, 3]]]],
        "when": .date(Date(timeIntervalSince1970: 32_503_680_000.123_456)),
        "then": .date(Date(timeIntervalSince1970: -62_135_596_800.987_654)),
        "nothing": nil, "nan": .double(.nan), "n\u{0}ul": "🙂\u{0}", "deep": ["x": ["y": ["z": true]]],
    ]

    func testReplacingAndDeletingRemoveExactlyTheDocumentsRows() throws {
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "d")
        try store.put(["other": "stays"], for: "other")
        let otherRows = try attributeRows(database)
        try store.put(awkward, for: "k")
        XCTAssertGreaterThan(try attributeRows(database), otherRows + 20)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("phones[].n[][]") == 3)), ["k"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("nothing").isNull)), ["k"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("nan").exists)), ["k"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("nan") == .double(.nan))), [], "NaN equals nothing")

        try store.put(["tags": ["b"]], for: "k")
        XCTAssertEqual(try attributeRows(database), otherRows + 2, "the replaced document's rows are all gone")
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("tags[]") == "a")), [])
        try store.put(awkward, for: "k")
        XCTAssertEqual(try store.delete(matching: DocumentQuery(DocumentField("when").exists)), 1)
        XCTAssertEqual(try attributeRows(database), otherRows)
        try store.put(awkward, for: "k")
        XCTAssertEqual(try store.removeAll(), 2)
        XCTAssertEqual(try attributeRows(database), 0)
    }

    /// A batch holds its documents' rows back and inserts them sorted, some thousands at a time: rows of a
    /// document replaced or deleted later in the same batch (held or already inserted) are all removed,
    /// every row reaches the table before commit, and a failed batch leaves nothing.
    func testABatchInsertsItsRowsSortedAndReplacesHeldRows() throws {
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "d")
        let document = { (index: Int) -> Document in
            ["n": .int(Int64(index)), "name": .string("p\(index)"), "tags": [.string("t\(index % 3)"), "x"], "o": ["k": "v"]]
        }
        let perDocument = 7  // n, name, tags, tags[] twice, o, o.k
        let count = 5_000  // 35,000 rows: more than the 32,768 a batch holds before inserting them
        try store.batch { batch in
            for index in 0..<count { try batch.put(document(index), for: "k\(index)") }
            try batch.put(["n": -1], for: "k5")  // its rows were inserted by a flush already
            try batch.put(["n": -2], for: "k\(count - 1)")  // its rows are still held
            XCTAssertEqual(try batch.delete(["k\(count - 2)", "k7"]), 2)
        }
        XCTAssertEqual(try attributeRows(database), (count - 4) * perDocument + 2)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("n") < 0)), ["k\(count - 1)", "k5"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("name") == "p5")), [])
        XCTAssertEqual(try store.count(matching: DocumentQuery(DocumentField("tags[]") == "x")), count - 4)
        XCTAssertEqual(try store.aggregate(.sum, of: "n"), Double((0..<count - 2).reduce(0, +) - 15))

        struct Stop: Error {}
        XCTAssertThrowsError(
            try store.batch { batch in
                for index in 0..<100 { try batch.put(document(index), for: "new\(index)") }
                throw Stop()
            })
        XCTAssertEqual(try attributeRows(database), (count - 4) * perDocument + 2)
    }

    /// A batch runs with a 16 MiB page cache (so W11's index pages are not spilled and read back), and
    /// the writer's own size is back after it, whether it committed or threw; a larger own size is kept.
    func testABatchWidensThePageCacheOnlyForItsDuration() throws {
        let cacheSize = { (database: Database) in
            try database.write { db in try db.fetchValue(Int.self, sql: "PRAGMA cache_size") }
        }
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "d")
        XCTAssertEqual(try cacheSize(database), -2048)
        try store.batch { batch in try batch.put(["n": 1], for: "a") }
        XCTAssertEqual(try cacheSize(database), -2048)
        struct Stop: Error {}
        XCTAssertThrowsError(
            try store.batch { batch in
                try batch.put(["n": 2], for: "b")
                throw Stop()
            })
        XCTAssertEqual(try cacheSize(database), -2048)
        XCTAssertEqual(try store.keys(matching: DocumentQuery()), ["a"])

        var configuration = Coffer.Configuration()
        configuration.cacheSizeKiB = 32_768
        let large = try Database.temporary(configuration: configuration)
        try DocumentStore(database: large, name: "d").batch { batch in try batch.put(["n": 1], for: "a") }
        XCTAssertEqual(try cacheSize(large), -32_768)
    }

    func testALeafSearchIsARangeOfTheTableItself() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3(
                "the expected EXPLAIN QUERY PLAN text is SQLite 3.15's (SEARCH TABLE name …); SQLite 3.49 writes SEARCH alias …, SCALAR SUBQUERY for the same plans"
            ))
        let database = try Database.temporary()
        _ = try DocumentStore(database: database, name: "people")
        let (plan, indexes) = try database.read { db in
            (
                try db.fetchAll(
                    sql: """
                        EXPLAIN QUERY PLAN SELECT doc_id FROM "doc-attr:people"
                        WHERE path_id = (SELECT id FROM "doc-path:people" WHERE path = ?) AND kind = ? AND value > ?
                        """,
                    arguments: ["age", 2, 30]
                ).map { try $0.decode(String.self, at: 3) },
                try db.fetchValue(
                    Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'doc-attr:people'")
            )
        }
        XCTAssertEqual(
            plan,
            [
                "SEARCH TABLE doc-attr:people USING PRIMARY KEY (path_id=? AND kind=? AND value>?)", "EXECUTE SCALAR SUBQUERY 1",
                "SEARCH TABLE doc-path:people USING COVERING INDEX sqlite_autoindex_doc-path:people_1 (path=?)",
            ])
        XCTAssertEqual(indexes, 0, "one B-tree: no second index to write per attribute")
    }

    /// Ordering is ranked from scans of the sorted paths: equal values (an integer and a real of one value
    /// too) tie and go by the next sort key, then by key; an order with a limit pages, counts and deletes
    /// that page.
    func testOrderingRanksTiesAcrossSortKeysAndPages() throws {
        let store = try DocumentStore(database: try Database.temporary(), name: "d")
        let rows: [(String, Document)] = [
            ("e", ["age": 30, "name": "b"]), ("d", ["age": 30.0, "name": "b"]), ("c", ["age": 30, "name": "a"]),
            ("b", ["age": 20, "name": "z"]), ("a", ["name": "m"]), ("f", ["age": 10, "name": "q"]),
        ]
        try store.batch { batch in for (key, row) in rows { try batch.put(row, for: key) } }
        let ascending = DocumentQuery(orderedBy: [.ascending("age"), .ascending("name")])
        XCTAssertEqual(try store.keys(matching: ascending), ["a", "f", "b", "c", "d", "e"])
        let mixed = DocumentQuery(orderedBy: [.descending("age"), .descending("name")])
        XCTAssertEqual(try store.keys(matching: mixed), ["d", "e", "c", "b", "f", "a"])
        var page = mixed
        page.limit = 2
        page.offset = 1
        XCTAssertEqual(try store.documents(matching: page).map(\.key), ["e", "c"])
        XCTAssertEqual(try store.count(matching: page), 2)
        XCTAssertEqual(try store.delete(matching: page), 2)
        XCTAssertEqual(try store.keys(matching: mixed), ["d", "b", "f", "a"])
    }

    /// A document deleted by raw SQL leaves its attribute rows behind; they never match, never count in
    /// an aggregate, and never describe a later document (ids are not reused).
    func testRowsOrphanedByRawSQLNeverCount() throws {
        let database = try Database.temporary()
        let store = try DocumentStore(database: database, name: "d")
        try store.put(["age": 10], for: "a")
        try store.put(["age": 20], for: "b")
        try database.write { db in try db.execute(sql: "DELETE FROM \"doc:d\" WHERE key = 'b'") }
        try store.put(["name": "new"], for: "c")
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("age") == 20)), [])
        XCTAssertEqual(try store.aggregate(.sum, of: "age"), 10)
        XCTAssertEqual(try store.aggregate(.sum, of: "age", matching: DocumentQuery(DocumentField("age") > 0)), 10)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(orderedBy: [.descending("age")])), ["a", "c"])
    }

    /// A store written with layout 1 (by the `sqlcipher` shell, the DDL of that layout) opens: its
    /// documents, ids and bags stay, its attribute rows are rebuilt from the bodies, the old index goes.
    func testALayoutOneStoreIsMigratedAtOpen() throws {
        let scratch = try DocumentStore(database: try Database.temporary(), name: "s")
        let people: [(String, Document)] = [
            ("tom", ["name": "Tom", "age": 42, "tags": ["admin", "swift"]]), ("ada", ["name": "Ada", "age": 36]),
        ]
        for (key, person) in people { try scratch.put(person, for: key) }
        let bodies = try scratch.database.read { db in
            try db.fetchAll(sql: "SELECT key, hex(body) FROM \"doc:s\" ORDER BY key").map {
                (try $0.decode(String.self, at: 0), try $0.decode(String.self, at: 1))
            }
        }
        let directory = try TemporaryDirectory()
        let path = directory.path("legacy.db")
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE "doc:people" (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, body BLOB NOT NULL,
                created_at REAL NOT NULL, updated_at REAL NOT NULL);
            CREATE TABLE "doc-attr:people" (doc_id INTEGER NOT NULL, path TEXT NOT NULL, ordinal INTEGER NOT NULL,
                kind INTEGER NOT NULL, value, folded TEXT, PRIMARY KEY (doc_id, path, ordinal)) WITHOUT ROWID;
            CREATE INDEX "doc-attr-by-value:people" ON "doc-attr:people"(path, kind, value);
            CREATE TABLE "doc-bag:people" (bag TEXT NOT NULL, doc_id INTEGER NOT NULL, PRIMARY KEY (bag, doc_id)) WITHOUT ROWID;
            CREATE INDEX "doc-bag-by-document:people" ON "doc-bag:people"(doc_id);
            CREATE TRIGGER "doc-cascade:people" AFTER DELETE ON "doc:people" BEGIN
                DELETE FROM "doc-attr:people" WHERE doc_id = old.id; DELETE FROM "doc-bag:people" WHERE doc_id = old.id; END;
            INSERT INTO "doc:people" VALUES (7, '\(bodies[0].0)', X'\(bodies[0].1)', 1, 1), (9, '\(bodies[1].0)', X'\(bodies[1].1)', 1, 1);
            INSERT INTO "doc-attr:people" VALUES (7, 'name', 0, 4, 'Ada', NULL), (9, 'nickname', 0, 0, NULL, NULL);
            INSERT INTO "doc-bag:people" VALUES ('speakers', 9);
            """)
        let database = try Database(path: path, configuration: Self.shellConfiguration)
        let store = try DocumentStore(database: database, name: "people")
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("tags[]") == "swift")), ["tom"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("nickname").exists)), [], "old rows are rebuilt")
        XCTAssertEqual(try store.keys(inBag: "speakers"), ["tom"])
        XCTAssertEqual(try store.aggregate(.sum, of: "age"), 78)
        XCTAssertEqual(try attributeRows(database, "people"), 7)
        let (indexes, ids) = try database.read { db in
            (
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name = 'doc-attr-by-value:people'"),
                try db.fetchAll(sql: "SELECT id FROM \"doc:people\" ORDER BY id").map { try $0.decode(Int64.self, at: 0) }
            )
        }
        XCTAssertEqual(indexes, 0)
        XCTAssertEqual(ids, [7, 9])
        try store.put(["name": "Eve"], for: "eve")
        XCTAssertEqual(try store.delete("tom"), true)
        XCTAssertEqual(try store.keys(inBag: "speakers"), [])
        XCTAssertEqual(try attributeRows(database, "people"), 3)
        try database.close()
        let reopened = try DocumentStore(
            database: try Database(path: path, configuration: Self.shellConfiguration), name: "people")
        XCTAssertEqual(try reopened.keys(matching: DocumentQuery(orderedBy: [.ascending("name")])), ["ada", "eve"])
    }
}
