import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Every result code has a `CofferError.<code>` pattern that works in a `catch` clause: matched here
/// against real failures where one can be provoked, and compiled for the rest.
final class CofferErrorPatternTests: XCTestCase {
    private var dir: TemporaryDirectory!
    private var database: Database!

    override func setUpWithError() throws {
        dir = try TemporaryDirectory()
        database = try Database(path: dir.path("app.db"), configuration: Configuration(encryption: .passphrase("pw")))
        try database.write { db in
            try db.executeScript(
                """
                CREATE TABLE parent(id INTEGER PRIMARY KEY, email TEXT UNIQUE NOT NULL CHECK (email <> ''));
                CREATE TABLE child(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES parent(id));
                INSERT INTO parent(id, email) VALUES (1, 'a@example.com');
                """)
        }
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        dir = nil
    }

    func testExtendedPatternsMatchRealFailures() throws {
        let write = { (sql: String) in { try self.database.write { try $0.execute(sql: sql) } } }
        XCTAssertEqual(matched(write("INSERT INTO parent(email) VALUES ('a@example.com')")), "constraintUnique")
        XCTAssertEqual(matched(write("INSERT INTO parent(id, email) VALUES (1, 'b')")), "constraintPrimaryKey")
        XCTAssertEqual(matched(write("INSERT INTO parent(email) VALUES (NULL)")), "constraintNotNull")
        XCTAssertEqual(matched(write("INSERT INTO parent(email) VALUES ('')")), "constraintCheck")
        XCTAssertEqual(matched(write("INSERT INTO child(parent) VALUES (99)")), "constraintForeignKey")
    }

    func testPrimaryPatternsMatchRealFailures() throws {
        let write = { (sql: String) in { try self.database.write { try $0.execute(sql: sql) } } }
        let read = { (sql: String) in { _ = try self.database.read { try $0.fetchAll(sql: sql) } } }
        XCTAssertEqual(primary(write("INSERT INTO parent(email) VALUES ('a@example.com')")), "constraint")
        XCTAssertEqual(primary(read("SELECT * FROM missing")), "error")
        XCTAssertEqual(primary(read("SELECT zeroblob(2000000000)")), "tooBig")
        XCTAssertEqual(primary(write("INSERT INTO parent(id, email) VALUES ('x', 'b')")), "mismatch")
        XCTAssertEqual(primary(read("INSERT INTO parent(email) VALUES ('c')")), "readOnly")
        XCTAssertEqual(primary { _ = try self.database.read { try $0.fetchAll(sql: "SELECT ?", arguments: [1, 2]) } }, "range")
        XCTAssertEqual(primary { _ = try Database(path: self.dir.path("no/such/dir/x.db")) }, "cantOpen")
        let restored = self.dir.path("app.db")
        XCTAssertEqual(
            primary { try Database.restore(from: self.dir.url, to: restored, configuration: Configuration()) }, "cantOpen")
        XCTAssertEqual(primary(write("SELECT 1; SELECT 2")), "misuse", "execute(sql:) takes one statement")
        XCTAssertEqual(
            primary {
                try self.database.write { db in
                    try db.forEachRow(sql: "SELECT * FROM parent") { _ in try db.execute(sql: "DROP TABLE child") }
                }
            }, "locked", "a table cannot be dropped while a statement reads the file")
        let noise = dir.path("noise.db")
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: noise))
        XCTAssertEqual(primary { _ = try Database(path: noise) }, "notADatabase")
        XCTAssertEqual(primary { _ = try self.damagedDatabase().read { try $0.fetchAll(sql: "SELECT * FROM t") } }, "corrupt")
        let blocker = try Database(path: dir.path("app.db"), configuration: lockingConfiguration())
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let database: Database = self.database
        DispatchQueue.global().async {
            try? database.write { _ in
                holding.signal()
                release.wait()
            }
        }
        holding.wait()
        XCTAssertEqual(primary { try blocker.write { try $0.execute(sql: "DELETE FROM child") } }, "busy")
        release.signal()
        try blocker.close()
    }

    func testCofferPatternsMatchRealFailures() throws {
        let path = dir.path("app.db")
        XCTAssertEqual(
            primary { _ = try Database(path: path, configuration: Configuration(encryption: .passphrase("wrong"))) },
            "wrongPassphrase")
        XCTAssertEqual(
            primary { _ = try self.database.read { try $0.fetchValue(Int.self, sql: "SELECT 'not a number'") } },
            "conversionFailed")
        XCTAssertEqual(
            primary {
                _ = try Database(
                    path: self.dir.path("bad.db"),
                    configuration: Configuration(encryption: .passphrase("pw"), cipher: CipherOptions(pageSize: 1000)))
            }, "invalidConfiguration")
        let noBackups = dir.url.appendingPathComponent("backups")
        try FileManager.default.createDirectory(at: noBackups, withIntermediateDirectories: true)
        XCTAssertEqual(
            primary { try Database.restore(from: noBackups, to: self.dir.path("new.db"), configuration: Configuration()) },
            "fileNotFound")
        XCTAssertEqual(
            primary { try self.database.write { try $0.addCompressionDictionary(Data([1, 2, 3]), id: 0) } }, "compressionFailed")
        if !LinkedSQLite.supports(.json) {  // SQLCipher 3.4.1: every feature SQLCipher 4 adds is missing
            XCTAssertEqual(
                primary { _ = try self.database.read { try $0.fetchAll(sql: "SELECT json_extract('{}', '$.a')") } },
                "unsupportedByLibrary")
        }
        try database.close()
        XCTAssertEqual(primary { _ = try self.database.read { try $0.fetchAll(sql: "SELECT 1") } }, "apiMisuse")
    }

    /// A plaintext database whose last page (a table leaf) the test overwrote with noise.
    private func damagedDatabase() throws -> Database {
        let path = dir.path("damaged.db")
        try Shell.run(
            "sqlite3", path,
            "CREATE TABLE t(x); WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 400) INSERT INTO t SELECT 'row ' || i FROM n;"
        )
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 4096)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 64))
        try handle.close()
        return try Database(path: path)
    }

    private func lockingConfiguration() -> Configuration {
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.busyTimeout = 0.1
        return configuration
    }

    /// The name of the first extended or Coffer pattern that catches what `body` throws.
    private func matched(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "no error"
        } catch CofferError.constraintUnique {
            return "constraintUnique"
        } catch CofferError.constraintPrimaryKey {
            return "constraintPrimaryKey"
        } catch CofferError.constraintNotNull {
            return "constraintNotNull"
        } catch CofferError.constraintCheck {
            return "constraintCheck"
        } catch CofferError.constraintForeignKey {
            return "constraintForeignKey"
        } catch {
            return "unmatched: \(error)"
        }
    }

    /// The name of the primary or Coffer pattern that catches what `body` throws; every pattern compiles here.
    private func primary(_ body: () throws -> Void) -> String {
        do {
            try body()
            return "no error"
        } catch CofferError.error {
            return "error"
        } catch CofferError.internal {
            return "internal"
        } catch CofferError.permission {
            return "permission"
        } catch CofferError.abort {
            return "abort"
        } catch CofferError.busy {
            return "busy"
        } catch CofferError.locked {
            return "locked"
        } catch CofferError.noMemory {
            return "noMemory"
        } catch CofferError.readOnly {
            return "readOnly"
        } catch CofferError.interrupt {
            return "interrupt"
        } catch CofferError.ioError {
            return "ioError"
        } catch CofferError.corrupt {
            return "corrupt"
        } catch CofferError.full {
            return "full"
        } catch CofferError.cantOpen {
            return "cantOpen"
        } catch CofferError.schema {
            return "schema"
        } catch CofferError.tooBig {
            return "tooBig"
        } catch CofferError.constraint {
            return "constraint"
        } catch CofferError.mismatch {
            return "mismatch"
        } catch CofferError.misuse {
            return "misuse"
        } catch CofferError.range {
            return "range"
        } catch CofferError.notADatabase {
            return "notADatabase"
        } catch CofferError.wrongPassphrase {
            return "wrongPassphrase"
        } catch CofferError.conversionFailed {
            return "conversionFailed"
        } catch CofferError.apiMisuse {
            return "apiMisuse"
        } catch CofferError.invalidConfiguration {
            return "invalidConfiguration"
        } catch CofferError.fileNotFound {
            return "fileNotFound"
        } catch CofferError.compressionFailed {
            return "compressionFailed"
        } catch CofferError.unsupportedByLibrary {
            return "unsupportedByLibrary"
        } catch {
            return "unmatched: \(error)"
        }
    }
}
