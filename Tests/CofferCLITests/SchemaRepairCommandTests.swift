import CofferTestSupport
import Foundation
import XCTest

/// What `coffer repair` and `coffer migrate` say about schema objects: a table SQLite refuses and a
/// virtual table whose module is missing are named with the reason, exit 0; migrate lists every object.
final class SchemaRepairCommandTests: XCTestCase {
    func testRefusedTableAndMissingModuleAreNamedAndTheRunSucceeds() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3("FTS5 is built into SQLCipher 4.9, so the missing-module path under test needs 3.4.1"))
        let dir = try TemporaryDirectory()
        let input = dir.path("app.db")
        let script = """
            import sqlcipher3, sys
            c = sqlcipher3.connect(sys.argv[1])
            c.create_collation('LOCALIZED', lambda a, b: (a > b) - (a < b))
            c.executescript('''CREATE TABLE a(x); INSERT INTO a VALUES (1), (2);
            CREATE TABLE loc(id INTEGER PRIMARY KEY, name TEXT COLLATE LOCALIZED);
            INSERT INTO loc(name) VALUES ('one'), ('two');
            CREATE VIRTUAL TABLE n5 USING fts5(body);
            INSERT INTO n5(body) VALUES ('hello world');''')
            c.commit()
            """
        let made = try Shell.run("/usr/bin/env", ["python3", "-c", script, input])
        try XCTSkipIf(made.stderr.contains("No module named"), "python sqlcipher3 is missing")
        XCTAssertEqual(made.status, 0, made.stderr)
        let result = try Shell.run(
            Shell.cofferExecutable, ["repair", input, "-o", dir.path("out.db"), "--report", dir.path("report.json")])
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertTrue(
            result.stdout.contains("  table loc: SQLite refuses its CREATE TABLE (no such collation sequence: LOCALIZED)\n"),
            result.stdout)
        XCTAssertTrue(
            result.stdout.contains(
                "  virtual table n5: fts5 table not creatable in this SQLite (no such module: fts5): its shadow tables are kept as ordinary tables\n"
            ),
            result.stdout)
        let report = try XCTUnwrap(
            JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dir.path("report.json"))))
                as? [String: Any])
        let issues = try XCTUnwrap(report["schema_issues"] as? [[String: String]])
        XCTAssertEqual(issues.map { $0["name"] }, ["loc", "n5"])
    }

    func testMigrateListsEveryObjectItCopied() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("chat.db")
        let made = try Shell.sqlcipher(
            input, passphrase: "pw",
            """
            CREATE TABLE msg(id INTEGER PRIMARY KEY AUTOINCREMENT, 'body' TEXT);
            CREATE VIRTUAL TABLE msg_fts USING fts4(content="msg", body);
            CREATE TRIGGER msg_ai AFTER INSERT ON msg BEGIN INSERT INTO msg_fts(docid, body) VALUES (new.id, new.body); END;
            CREATE VIRTUAL TABLE geo USING rtree(id, x0, x1);
            CREATE INDEX msg_body ON msg(lower(body));
            CREATE VIEW recent AS SELECT * FROM msg WHERE id > 1;
            INSERT INTO msg(body) VALUES ('hello'), ('world');
            INSERT INTO geo VALUES (1, 0.5, 1.5);
            """)
        XCTAssertEqual(made.status, 0, made.stderr)
        try "pw\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
        let result = try Shell.run(
            Shell.cofferExecutable, ["migrate", input, "-o", dir.path("out.db"), "--passphrase-file", dir.path("pw")])
        XCTAssertEqual(result.status, 0, result.stderr)
        for line in [
            "  virtual table msg_fts  ok", "  virtual table geo  ok", "  trigger msg_ai  ok", "  index msg_body  ok",
            "  view recent  ok", "  sqlite_sequence sqlite_sequence  ok",
        ] {
            XCTAssertTrue(result.stdout.contains(line + "\n"), "\(line) in \(result.stdout)")
        }
        let output = dir.path("out.db")  // in Coffer's default derivation: the shell opens it through the raw key
        let answers = try Shell.sqlcipher(
            output, passphrase: try ShellRawKey.spec(passphrase: "pw", path: output),
            "SELECT docid FROM msg_fts WHERE msg_fts MATCH 'world'; SELECT id FROM geo WHERE x0 > 0;")
        XCTAssertEqual(answers.stdout, "2\n1\n")
    }
}
