import Coffer
import CofferTestSupport
import XCTest

@testable import CofferRepair

/// Virtual tables, quoted identifiers, AUTOINCREMENT and refused tables through the repair writer, on
/// files written by the `sqlcipher` shell (SQLite 3.15), python's sqlcipher3 (SQLCipher 4.12, with FTS5) and
/// python's sqlite3.
final class VirtualTableRepairTests: XCTestCase {
    static let schema = """
        CREATE TABLE msg(id INTEGER PRIMARY KEY AUTOINCREMENT, 'body' TEXT, [from] TEXT DEFAULT ('a,b'),
          "x""y" NUMERIC(10,2) CHECK ("x""y" >= 0 AND 1 IN (1,2)), `order` TEXT COLLATE NOCASE);
        CREATE VIRTUAL TABLE msg_fts USING fts4(content="msg", body, tokenize=unicode61 "remove_diacritics=0");
        CREATE TRIGGER msg_ai AFTER INSERT ON msg BEGIN INSERT INTO msg_fts(docid, body) VALUES (new.id, new.body); END;
        CREATE TRIGGER msg_bd BEFORE DELETE ON msg BEGIN DELETE FROM msg_fts WHERE docid = old.id; END;
        CREATE VIRTUAL TABLE note USING fts4(title, body, prefix="2,3", tokenize=porter, notindexed=title, matchinfo=fts3);
        CREATE VIRTUAL TABLE bare USING fts4(content="", a, languageid="lid");
        CREATE VIRTUAL TABLE old3 USING fts3(a, b, tokenize=simple);
        CREATE VIRTUAL TABLE geo USING rtree(id, minx, maxx, miny, maxy);
        CREATE VIRTUAL TABLE rev USING fts4(a, order=DESC);
        CREATE INDEX msg_lower ON msg(lower(body)) WHERE id > 2;
        CREATE VIEW recent AS SELECT id, body FROM msg WHERE id > 100;
        WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 300)
          INSERT INTO msg(body, "x""y", `order`) SELECT 'hello world ' || i || ' 你好世界 café', i, 'o' || i FROM c;
        DELETE FROM msg WHERE id > 290 OR id % 7 = 0;
        INSERT INTO note(title, body) SELECT 'title ' || id, 'running jumps ' || body FROM msg;
        INSERT INTO bare(docid, a, lid) SELECT id, body, id % 2 FROM msg WHERE id < 50;
        INSERT INTO old3(a, b) SELECT body, id FROM msg WHERE id < 80;
        INSERT INTO rev(docid, a) SELECT id, body FROM msg WHERE id < 120;
        WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 500)
          INSERT INTO geo SELECT i, i * 0.5, i * 0.5 + 1.25, i * 0.25, i * 0.25 + 3 FROM c;
        PRAGMA user_version = 7;
        PRAGMA application_id = 1234;
        """

    /// Queries whose answers must be the same on INPUT and OUTPUT.
    static let queries = """
        SELECT count(*), group_concat(id) FROM (SELECT id FROM geo WHERE minx > 10 AND maxx < 50 ORDER BY id);
        SELECT group_concat(id) FROM (SELECT id FROM geo WHERE miny BETWEEN 5 AND 9 ORDER BY id);
        SELECT group_concat(docid) FROM (SELECT docid FROM note WHERE note MATCH 'jump* title' ORDER BY docid);
        SELECT count(*) FROM note WHERE note MATCH 'ru*';
        SELECT group_concat(docid) FROM (SELECT docid FROM msg_fts WHERE msg_fts MATCH 'world 12*' ORDER BY docid);
        SELECT count(*) FROM old3 WHERE old3 MATCH 'hello';
        SELECT group_concat(docid) FROM (SELECT docid FROM rev WHERE rev MATCH 'hello 1*' ORDER BY docid DESC);
        SELECT count(*) FROM bare WHERE bare MATCH 'hello' AND lid = 1;
        SELECT group_concat(id) FROM (SELECT id FROM recent WHERE body LIKE '%15%' ORDER BY id);
        SELECT type, name, tbl_name FROM sqlite_master ORDER BY name;
        SELECT * FROM sqlite_sequence;
        PRAGMA user_version;
        PRAGMA application_id;
        """

    private func repair(_ input: String, key: Encryption, pageSize: Int, to output: String) throws -> RepairReport {
        var settings = !key.isEncrypted ? CipherSettings.plaintext : .sqlcipher3
        settings.pageSize = pageSize
        let salvager = try Salvager(path: input, key: key, settings: settings)
        var writer = try RepairWriter(
            path: output, encryption: !key.isEncrypted ? .none : .passphrase("pw"),
            cipher: CipherOptions(pageSize: pageSize, keyDerivation: .sqlcipher3))  // as `coffer repair` keeps INPUT's
        var report = try salvager.run(into: &writer, pipeline: SalvagePipeline())
        writer.annotate(&report)
        try writer.close()
        return report
    }

    func testFullTextAndRTreeComeBackAsVirtualTablesAnsweringTheSameQueries() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("chat.db")
        try Shell.sqlcipher(input, pageSize: 1024, Self.schema)
        let output = dir.path("out.db")
        let report = try repair(input, key: .passphrase("pw"), pageSize: 1024, to: output)
        XCTAssertEqual(report.schemaIssues, [])
        XCTAssertEqual(report.rowsDropped, 0)
        let before = try Shell.sqlcipher(input, passphrase: "pw", pageSize: 1024, Self.queries)
        let after = try Shell.sqlcipher(output, passphrase: "pw", pageSize: 1024, Self.queries)
        XCTAssertEqual(after.stderr, "")
        XCTAssertEqual(after.stdout, before.stdout)
        XCTAssertTrue(before.stdout.contains("\nmsg|300\n"), before.stdout)
        let checks = try Shell.sqlcipher(
            output, passphrase: "pw", pageSize: 1024,
            """
            PRAGMA integrity_check;
            INSERT INTO msg_fts(msg_fts) VALUES('integrity-check');
            INSERT INTO note(note) VALUES('integrity-check');
            INSERT INTO old3(old3) VALUES('integrity-check');
            INSERT INTO msg(body) VALUES('new one');
            SELECT max(id) FROM msg;
            SELECT docid FROM msg_fts WHERE msg_fts MATCH 'new';
            """)
        XCTAssertEqual(checks.stderr, "")
        XCTAssertEqual(checks.stdout, "ok\n301\n301\n", "AUTOINCREMENT continues after the deleted top rows")
    }

    func testLostFullTextShadowRowsAreRebuiltFromTheContent() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("lost.db")
        // The index loses its segments (as if their pages were gone); the content survives.
        try Shell.sqlcipher(input, pageSize: 4096, Self.schema + "\nDELETE FROM note_segments; DELETE FROM note_segdir;")
        let output = dir.path("out.db")
        let report = try repair(input, key: .passphrase("pw"), pageSize: 4096, to: output)
        XCTAssertEqual(report.schemaIssues.map(\.name), ["note"])
        let answers = try Shell.sqlcipher(
            output, passphrase: "pw",
            """
            INSERT INTO note(note) VALUES('integrity-check');
            SELECT count(*) FROM note WHERE note MATCH 'jumps';
            SELECT count(*) FROM note_content;
            """)
        XCTAssertEqual(answers.stderr, "")
        XCTAssertEqual(answers.stdout, "249\n249\n")
    }

    func testLostRTreeNodesAreRebuiltFromTheSurvivingLeaves() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("maps.db")
        // One leaf of the R*Tree is lost (as if its page were gone), and a third of `_rowid` (which maps
        // entries to leaves) with it; the other leaves survive. `expected` lists their entries.
        try Shell.sqlcipher(
            input, pageSize: 1024,
            Self.schema + """

                CREATE TABLE expected AS SELECT rowid AS id FROM geo_rowid WHERE nodeno != (SELECT max(nodeno) FROM geo_rowid);
                DELETE FROM geo_node WHERE nodeno = (SELECT max(nodeno) FROM geo_rowid);
                DELETE FROM geo_rowid WHERE rowid % 3 = 0;
                """)
        let survivors = try Shell.sqlcipher(
            input, passphrase: "pw", pageSize: 1024, "SELECT group_concat(id) FROM (SELECT id FROM expected ORDER BY id);"
        ).stdout
        let output = dir.path("out.db")
        let report = try repair(input, key: .passphrase("pw"), pageSize: 1024, to: output)
        XCTAssertEqual(report.schemaIssues.map(\.name), ["geo"])
        let after = try Shell.sqlcipher(
            output, passphrase: "pw", pageSize: 1024,
            """
            SELECT group_concat(id) FROM (SELECT id FROM geo ORDER BY id);
            SELECT count(*) = (SELECT count(*) FROM geo) FROM geo
              WHERE minx = id * 0.5 AND maxx = id * 0.5 + 1.25 AND miny = id * 0.25 AND maxy = id * 0.25 + 3;
            SELECT count(*) = (SELECT count(*) FROM geo_rowid) FROM geo;
            INSERT INTO geo VALUES (9999, 1, 2, 3, 4);
            SELECT id FROM geo WHERE minx >= 1 AND maxx <= 2;
            """)
        XCTAssertEqual(after.stderr, "")
        XCTAssertEqual(after.stdout, survivors + "1\n1\n9999\n")
        XCTAssertGreaterThan(survivors.split(separator: ",").count, 400)
    }

    func testMissingModuleKeepsShadowTablesAsTables() throws {
        try XCTSkipIf(
            TestedSQLCipher.isVersion4,
            TestedSQLCipher.only3("FTS5 is built into SQLCipher 4.9, so the missing-module path under test needs 3.4.1"))
        let dir = try TemporaryDirectory()
        let input = dir.path("fts5.db")
        let script = """
            import sqlcipher3, sys
            c = sqlcipher3.connect(sys.argv[1])
            c.executescript('''PRAGMA key = 'pw'; CREATE TABLE t(a); INSERT INTO t VALUES (1);
            CREATE VIRTUAL TABLE n5 USING fts5(body, tokenize = 'porter');
            INSERT INTO n5(body) VALUES ('hello world'), ('running jumps');''')
            c.commit()
            """
        let made = try Shell.run("/usr/bin/env", ["python3", "-c", script, input])
        try XCTSkipIf(made.stderr.contains("No module named"), "python sqlcipher3 is missing: \(made.stderr)")
        XCTAssertEqual(made.status, 0, made.stderr)
        let file = try ProfileDetection.open(path: input, key: .passphrase("pw"))
        let output = dir.path("out.db")
        var writer = try RepairWriter(path: output, encryption: .none)
        var report = try Salvager(file: file).run(into: &writer)
        writer.annotate(&report)
        try writer.close()
        XCTAssertEqual(
            report.schemaIssues,
            [
                SchemaIssue(
                    kind: "virtual table", name: "n5",
                    reason:
                        "fts5 table not creatable in this SQLite (no such module: fts5): its shadow tables are kept as ordinary tables"
                )
            ])
        let tables = try Shell.run("sqlite3", output, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name;")
        XCTAssertEqual(tables, "n5_config\nn5_content\nn5_data\nn5_docsize\nn5_idx\nt\n")
        XCTAssertEqual(try Shell.run("sqlite3", output, "SELECT c0 FROM n5_content ORDER BY id;"), "hello world\nrunning jumps\n")
        let migrated = try FileMigration.run(file: file, output: dir.path("migrated.db"), encryption: .none)
        XCTAssertTrue(migrated.verified)
        XCTAssertEqual(migrated.objects.map(\.verdict), [.keptAsTables])
    }

    func testMigrateChecksEveryObject() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("chat.db")
        try Shell.sqlcipher(input, pageSize: 4096, Self.schema)
        let file = try ProfileDetection.open(path: input, key: .passphrase("pw"))
        let result = try FileMigration.run(file: file, output: dir.path("out.db"), encryption: .passphrase("pw"))
        XCTAssertTrue(result.verified, "\(result.checks) \(result.objects)")
        XCTAssertEqual(result.report.schemaIssues, [])
        XCTAssertEqual(result.objects.filter { $0.verdict != .copied }, [])
        XCTAssertEqual(
            result.objects.map { "\($0.kind) \($0.name)" }.sorted(),
            [
                "index msg_lower", "sqlite_sequence sqlite_sequence", "trigger msg_ai", "trigger msg_bd", "view recent",
                "virtual table bare", "virtual table geo", "virtual table msg_fts", "virtual table note",
                "virtual table old3", "virtual table rev",
            ])
        let before = try Shell.sqlcipher(input, passphrase: "pw", Self.queries)
        // migrate writes Coffer's default derivation: the shell opens OUTPUT through the raw key.
        let output = dir.path("out.db")
        let after = try Shell.sqlcipher(output, passphrase: try ShellRawKey.spec(passphrase: "pw", path: output), Self.queries)
        XCTAssertEqual(after.stdout, before.stdout)
    }

    func testATableSQLiteRefusesIsNamedAndTheOthersAreSalvaged() throws {
        let dir = try TemporaryDirectory()
        let input = dir.path("collate.db")
        let script = """
            import sqlite3, sys
            c = sqlite3.connect(sys.argv[1])
            c.create_collation('LOCALIZED', lambda a, b: (a > b) - (a < b))
            c.executescript('''CREATE TABLE a(x); INSERT INTO a VALUES (1), (2);
            CREATE TABLE loc(id INTEGER PRIMARY KEY, name TEXT COLLATE LOCALIZED);
            INSERT INTO loc(name) VALUES ('one'), ('two');
            CREATE TABLE b(y); INSERT INTO b VALUES ('z');''')
            c.commit()
            """
        let made = try Shell.run("/usr/bin/env", ["python3", "-c", script, input])
        XCTAssertEqual(made.status, 0, made.stderr)
        let output = dir.path("out.db")
        let report = try repair(input, key: .none, pageSize: 4096, to: output)
        XCTAssertEqual(
            report.schemaIssues,
            [
                SchemaIssue(
                    kind: "table", name: "loc",
                    reason: "SQLite refuses its CREATE TABLE (no such collation sequence: LOCALIZED)")
            ])
        XCTAssertEqual(try Shell.run("sqlite3", output, "SELECT x FROM a; SELECT y FROM b;"), "1\n2\nz\n")
        XCTAssertEqual(report.rowsSalvaged, 5, "loc's rows come back as orphans in a recovered table")
        let file = try DatabaseFile(path: input, key: .none, settings: .plaintext)
        XCTAssertThrowsError(try FileMigration.run(file: file, output: dir.path("migrated.db"), encryption: .none)) { error in
            guard case .tableRefused(let issue) = error as? MigrationError else { return XCTFail("\(error)") }
            XCTAssertEqual(issue.name, "loc")
        }
    }
}
