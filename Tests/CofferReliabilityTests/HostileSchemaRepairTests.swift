import CofferTestSupport
import Foundation
import XCTest

/// Schema SQL read from a damaged file is untrusted input to `coffer repair`.
final class HostileSchemaRepairTests: XCTestCase {
    private var dir: TemporaryDirectory!
    private var outside: TemporaryDirectory!

    /// XCTest keeps every test case object until the run ends: the directory goes with the test.
    override func tearDown() {
        dir = nil
        outside = nil
        super.tearDown()
    }

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        outside = try TemporaryDirectory("coffer-outside")
        try "pw\n".write(toFile: dir.path("pw"), atomically: true, encoding: .utf8)
    }

    private func sqlcipher(_ path: String, _ sql: String) throws -> String {
        let result = try Shell.run("/usr/bin/sqlcipher", ["-batch", path], input: sql)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    private func repair(_ input: String, _ output: String, _ extra: [String] = []) throws -> ChildRun {
        let run = try ChildRun.coffer(["repair", input, "-o", output] + extra, in: dir.url.path)
        XCTAssertNil(run.signal, run.stderr)
        return run
    }

    /// Every `sql` in sqlite_master smuggles an ATTACH (and a write through it) after its real statement.
    /// The output gets no object from that sql and no file but OUTPUT is created.
    func testSchemaSQLWithAttachTouchesNoOtherFile() throws {
        let input = dir.path("attach.db")
        let output = dir.path("out.db")
        let evil = outside.path("evil.db")
        _ = try sqlcipher(
            input,
            """
            CREATE TABLE t(x);
            CREATE TABLE keep(y);
            CREATE INDEX t_x ON t(x);
            CREATE VIEW v AS SELECT x FROM t;
            CREATE TRIGGER tr AFTER INSERT ON keep BEGIN SELECT 1; END;
            INSERT INTO t VALUES(1), (2);
            INSERT INTO keep VALUES('kept');
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = sql || '; ATTACH DATABASE ''\(evil)'' AS p; CREATE TABLE p.e(y); INSERT INTO p.e VALUES(1)'
              WHERE name IN ('t', 't_x', 'v', 'tr');
            """)
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path))
        let run = try repair(input, output)
        XCTAssertEqual(run.exitStatus, 0, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: evil), "ATTACH from schema sql created a file")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.url.path), [])
        let after = Set(try FileManager.default.contentsOfDirectory(atPath: dir.url.path))
        XCTAssertEqual(
            after.subtracting(before).subtracting([".child-stdout", ".child-stderr"]), ["out.db"],
            "repair wrote only OUTPUT")
        let objects = try sqlcipher(output, "SELECT type || ' ' || name FROM sqlite_master ORDER BY name; SELECT y FROM keep;")
        XCTAssertEqual(objects, "table keep\nkept\n", "only the untouched table came back")
    }

    /// Only CREATE TABLE/INDEX/VIEW/TRIGGER sql is run; anything else under a schema row is refused.
    func testOnlyCreateStatementsRun() throws {
        let input = dir.path("kinds.db")
        let output = dir.path("out.db")
        let evil = outside.path("evil2.db")
        _ = try sqlcipher(
            input,
            """
            CREATE TABLE t(x); INSERT INTO t VALUES(1);
            CREATE TABLE u(x); CREATE VIEW w AS SELECT 1; CREATE INDEX ux ON u(x);
            PRAGMA writable_schema = ON;
            UPDATE sqlite_master SET sql = 'ATTACH DATABASE ''\(evil)'' AS p' WHERE name = 'u';
            UPDATE sqlite_master SET sql = 'PRAGMA writable_schema = ON' WHERE name = 'w';
            UPDATE sqlite_master SET sql = 'DROP TABLE t' WHERE name = 'ux';
            """)
        let run = try repair(input, output)
        XCTAssertEqual(run.exitStatus, 0, run.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: evil))
        XCTAssertEqual(try sqlcipher(output, "SELECT group_concat(name) FROM sqlite_master; SELECT x FROM t;"), "t\n1\n")
    }

    /// A trigger that would empty the tables on insert, and a view over them, are created only after every
    /// row is in: the salvage keeps all rows, and the objects still come back.
    func testHostileTriggerCannotEatTheSalvage() throws {
        let input = dir.path("trigger.db")
        let output = dir.path("out.db")
        _ = try sqlcipher(
            input,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
            CREATE TABLE u(id INTEGER PRIMARY KEY, v TEXT);
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300)
              INSERT INTO t SELECT x, 'v' || x FROM c;
            INSERT INTO u SELECT * FROM t;
            CREATE TRIGGER eat_t AFTER INSERT ON t BEGIN DELETE FROM t; DELETE FROM u; END;
            CREATE TRIGGER eat_u AFTER INSERT ON u BEGIN DELETE FROM u; DELETE FROM t; END;
            CREATE VIEW both_tables AS SELECT * FROM t UNION ALL SELECT * FROM u;
            """)
        let run = try repair(input, output)
        XCTAssertEqual(run.exitStatus, 0, run.stderr)
        let check = try sqlcipher(
            output,
            """
            SELECT count(*) FROM t; SELECT count(*) FROM u; SELECT count(*) FROM both_tables;
            SELECT group_concat(name) FROM (SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name);
            PRAGMA integrity_check;
            """)
        XCTAssertEqual(check, "300\n300\n600\neat_t,eat_u\nok\n")
    }

    /// TEXT that is not valid UTF-8 comes out of an encrypted repair byte for byte (end to end, CLI).
    func testNonUTF8TextSurvivesEncryptedRepairByteForByte() throws {
        let input = dir.path("text.db")
        let output = dir.path("out.db")
        let values = ["C328FF", "FF", "80", "EDA080", "F4908080", "00", "41004200", "E282"]
        let inserts = values.enumerated().map { "INSERT INTO t VALUES(\($0.offset + 1), CAST(x'\($0.element)' AS TEXT));" }
        let made = try Shell.sqlcipher(
            input, passphrase: "pw",
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, s TEXT);
            \(inserts.joined(separator: "\n"))
            """)
        XCTAssertEqual(made.status, 0, made.stderr)
        let run = try repair(input, output, ["--passphrase-file", dir.path("pw")])
        XCTAssertEqual(run.exitStatus, 0, run.stderr)
        let check = try Shell.sqlcipher(output, passphrase: "pw", "SELECT typeof(s) || ' ' || hex(s) FROM t ORDER BY id;")
        XCTAssertEqual(check.stdout, values.map { "text \($0)\n" }.joined(), check.stderr)
    }
}
