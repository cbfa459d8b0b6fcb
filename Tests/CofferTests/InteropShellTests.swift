import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The `sqlcipher` command-line shell is an independent SQLCipher client: files must cross both ways. A
/// passphrase crosses only with SQLCipher 3's derivation (`CipherOptions.sqlcipher3`); Coffer's default
/// needs the raw-key route (KeyDerivationDefaultTests).
final class InteropShellTests: XCTestCase {
    func testCofferFileOpensInShell() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("coffer.db")
        let db = try Database(
            path: path, configuration: Configuration(encryption: .passphrase("it's a secret"), cipher: .sqlcipher3))
        try db.write { db in
            try db.execute(sql: "CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT)")
            try db.execute(sql: "INSERT INTO person(name) VALUES (?), (?)", arguments: ["Ada", "Grace"])
        }
        try db.close()
        // SQLCipher 3's own defaults, page size included: no PRAGMA but the key.
        let result = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", path],
            input: "PRAGMA key = 'it''s a secret';\nSELECT name FROM person ORDER BY id;\n")
        XCTAssertEqual(result.stdout, "Ada\nGrace\n", result.stderr)
        let wrong = try Shell.sqlcipher(path, passphrase: "nope", "SELECT name FROM person;")
        XCTAssertTrue(wrong.stderr.contains("not a database") || wrong.stderr.contains("encrypted"), wrong.stderr)
    }

    func testShellFileOpensInCoffer() throws {
        let dir = try TemporaryDirectory()
        for pageSize in [1024, 4096] {
            let path = dir.path("shell-\(pageSize).db")
            let made = try Shell.sqlcipher(
                path, passphrase: "pw", pageSize: pageSize,
                """
                CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT, weight REAL);
                INSERT INTO item(label, weight) VALUES ('a', 1.5), ('b', 2.5), ('c', NULL);
                """)
            XCTAssertEqual(made.status, 0, made.stderr)
            let db = try Database(
                path: path,
                configuration: Configuration(
                    encryption: .passphrase("pw"), cipher: CipherOptions(pageSize: pageSize, keyDerivation: .sqlcipher3)))
            let rows = try db.read { try $0.fetchAll(sql: "SELECT label, weight FROM item ORDER BY id") }
            XCTAssertEqual(rows.map { $0["label"] as String? }, ["a", "b", "c"])
            XCTAssertEqual(rows.map { $0["weight"] as Double? }, [1.5, 2.5, nil])
            try db.write { try $0.execute(sql: "INSERT INTO item(label) VALUES ('d')") }
            try db.close()
            let back = try Shell.sqlcipher(path, passphrase: "pw", pageSize: pageSize, "SELECT count(*) FROM item;")
            XCTAssertEqual(back.stdout, "4\n", back.stderr)
        }
    }
}
