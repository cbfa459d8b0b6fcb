import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Layout 3 keys attribute rows by a path id: a store written by layout 2 (each row holding its path's
/// text) is read as it is when opened read-only, and migrated at a writable open.
final class DocumentStoreMigrationTests: XCTestCase {
    /// The `sqlcipher` shell's defaults (passphrase `pw` as `Shell.sqlcipher` gives it).
    private static let shellConfiguration = Coffer.Configuration(
        encryption: .passphrase("pw"), cipher: CipherOptions(keyDerivation: .sqlcipher3))

    private let people: [(String, Document)] = [
        ("tom", ["name": "Tom", "age": 42, "tags": ["admin", "swift"], "address": ["city": "Leeds"]]),
        ("ada", ["name": "Ada", "age": 36, "tags": ["swift"], "nickname": nil]),
        ("eve", ["name": "ÉVE", "age": 29.5, "joined": .date(Date(timeIntervalSince1970: 1_600_000_000.25))]),
    ]

    /// A layout-2 file written by the `sqlcipher` shell: layout 2's DDL, with the bodies and attribute
    /// rows (path as text) that layout 2 wrote for `people` (taken from a scratch store, whose rows
    /// differ only in holding a path id), ids 5, 8, 9, bag `speakers` = {ada}.
    private func layoutTwoFile(in directory: TemporaryDirectory) throws -> String {
        let scratch = try DocumentStore(database: try Database.temporary(), name: "s")
        for (key, person) in people { try scratch.put(person, for: key) }
        let (documents, rows) = try scratch.database.read { db in
            (
                try db.fetchAll(
                    sql: "SELECT id, quote(key), quote(body), created_at FROM \"doc:s\" ORDER BY id"
                ).map {
                    "(\(try $0.decode(Int64.self, at: 0) + 4 + (try $0.decode(Int64.self, at: 0) > 1 ? 2 : 0)),"
                        + " \(try $0.decode(String.self, at: 1)), \(try $0.decode(String.self, at: 2)),"
                        + " \(try $0.decode(Double.self, at: 3)), \(try $0.decode(Double.self, at: 3)))"
                },
                try db.fetchAll(
                    sql: """
                        SELECT quote(p.path), a.kind, quote(a.value), a.doc_id, a.ordinal, quote(a.folded)
                        FROM "doc-attr:s" AS a JOIN "doc-path:s" AS p ON p.id = a.path_id
                        """
                ).map { row in
                    let id = try row.decode(Int64.self, at: 3)
                    return "(\(try row.decode(String.self, at: 0)), \(try row.decode(Int64.self, at: 1)),"
                        + " \(try row.decode(String.self, at: 2)), \(id + 4 + (id > 1 ? 2 : 0)),"
                        + " \(try row.decode(Int64.self, at: 4)), \(try row.decode(String.self, at: 5)))"
                }
            )
        }
        let path = directory.path("layout2.db")
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE "doc:people" (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL UNIQUE,
                body BLOB NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL);
            CREATE TABLE "doc-attr:people" (path TEXT NOT NULL, kind INTEGER NOT NULL, value NOT NULL,
                doc_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, folded TEXT,
                PRIMARY KEY (path, kind, value, doc_id, ordinal)) WITHOUT ROWID;
            CREATE TABLE "doc-bag:people" (bag TEXT NOT NULL, doc_id INTEGER NOT NULL, PRIMARY KEY (bag, doc_id)) WITHOUT ROWID;
            CREATE INDEX "doc-bag-by-document:people" ON "doc-bag:people"(doc_id);
            CREATE TRIGGER "doc-cascade:people" AFTER DELETE ON "doc:people" BEGIN
                DELETE FROM "doc-bag:people" WHERE doc_id = old.id; END;
            INSERT INTO "doc:people" VALUES \(documents.joined(separator: ", "));
            INSERT INTO "doc-attr:people" VALUES \(rows.joined(separator: ", "));
            INSERT INTO "doc-bag:people" VALUES ('speakers', 8);
            """)
        return path
    }

    /// The queries every layout answers alike for `people`.
    private func assertAnswers(_ store: DocumentStore, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertEqual(
            try store.keys(matching: DocumentQuery(DocumentField("tags[]") == "swift")), ["ada", "tom"], file: file, line: line)
        XCTAssertEqual(
            try store.keys(matching: DocumentQuery(DocumentField("name").beginsWith("év", caseInsensitive: true))), ["eve"],
            file: file, line: line)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("nickname").isNull)), ["ada"], file: file, line: line)
        XCTAssertEqual(
            try store.keys(matching: DocumentQuery(DocumentField("address.city") == "Leeds" || DocumentField("age") < 30)),
            ["eve", "tom"], file: file, line: line)
        XCTAssertEqual(
            try store.keys(matching: DocumentQuery(orderedBy: [.descending("age")])), ["tom", "ada", "eve"], file: file,
            line: line)
        XCTAssertEqual(try store.aggregate(.sum, of: "age"), 107.5, file: file, line: line)
        XCTAssertEqual(try store.keys(inBag: "speakers"), ["ada"], file: file, line: line)
    }

    func testALayoutTwoStoreIsReadAsItIsWhenReadOnlyAndMigratedWhenWritable() throws {
        let directory = try TemporaryDirectory()
        let path = try layoutTwoFile(in: directory)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))

        var readOnly = Self.shellConfiguration
        readOnly.readOnly = true
        let reader = try Database(path: path, configuration: readOnly)
        try assertAnswers(try DocumentStore(database: reader, name: "people"))
        try reader.close()
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "a read-only open writes nothing")

        let database = try Database(path: path, configuration: Self.shellConfiguration)
        let store = try DocumentStore(database: database, name: "people")
        try assertAnswers(store)
        let (tables, ids, paths, rows) = try database.read { db in
            (
                try db.fetchAll(sql: "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'doc%' ORDER BY name")
                    .map { try $0.decode(String.self, at: 0) },
                try db.fetchAll(sql: "SELECT id FROM \"doc:people\" ORDER BY id").map { try $0.decode(Int64.self, at: 0) },
                try db.fetchAll(sql: "SELECT path FROM \"doc-path:people\" ORDER BY id").map {
                    try $0.decode(String.self, at: 0)
                },
                try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \"doc-attr:people\"")
            )
        }
        XCTAssertEqual(tables, ["doc-attr:people", "doc-bag:people", "doc-path:people", "doc:people"])
        XCTAssertEqual(ids, [5, 8, 9])
        XCTAssertEqual(paths, paths.sorted(), "ids given in path order")
        XCTAssertEqual(Set(paths), ["address", "address.city", "age", "joined", "name", "nickname", "tags", "tags[]"])
        XCTAssertEqual(rows, 7 + 5 + 3)

        try store.put(["name": "Bob", "tags": ["swift"], "pets": ["cat"]], for: "bob")
        XCTAssertEqual(try store.delete("tom"), true)
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("tags[]") == "swift")), ["ada", "bob"])
        XCTAssertEqual(try store.keys(matching: DocumentQuery(DocumentField("pets[]").exists)), ["bob"])
        try database.close()
        let reopened = try DocumentStore(
            database: try Database(path: path, configuration: Self.shellConfiguration), name: "people")
        XCTAssertEqual(try reopened.keys(matching: DocumentQuery(orderedBy: [.ascending("name")])), ["ada", "bob", "eve"])
        XCTAssertEqual(try reopened.count(matching: DocumentQuery(DocumentField("address.city").exists)), 0)
    }
}
