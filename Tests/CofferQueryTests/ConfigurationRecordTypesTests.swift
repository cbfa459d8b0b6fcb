import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// `Configuration.recordTypes`: opening the database brings its schema up to the record types, before
/// any read or write, on fresh files and on files another producer wrote.
final class ConfigurationRecordTypesTests: XCTestCase {
    private func configuration() -> Configuration {
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.recordTypes = [Author.self, Book.self, Bio.self]
        return configuration
    }

    /// The names a query's first column gives, in order, read on a reader.
    private func names(_ sql: String, _ database: Database) throws -> [String] {
        let list = try database.read { db in try db.fetchValue(String.self, sql: "SELECT group_concat(name) FROM (\(sql))") }
        return list?.split(separator: ",").map(String.init) ?? []
    }

    private func columns(_ table: String, _ database: Database) throws -> [String] {
        try database.read { db in try db.columnNames(of: table) }
    }

    func testAFreshFileHasItsTablesAndIndexesAtOpenAndAReaderSeesThemFirst() throws {
        let directory = try TemporaryDirectory()
        let configuration = configuration()
        XCTAssertEqual(configuration.recordTypes.map { $0.tableName }, ["author", "book", "bio"])
        let database = try Database(path: directory.path("fresh.db"), configuration: configuration)
        // The very first access is a read, on a reader connection.
        let tables = try names("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name", database)
        XCTAssertEqual(tables, ["author", "bio", "book"])
        XCTAssertEqual(try database.read { try Book.fetchCount($0) }, 0)
        let indexes = try names(
            "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'book' AND sql IS NOT NULL", database)
        XCTAssertEqual(indexes.count, 2, "authorID and editorID indexes: \(indexes)")
        try database.close()
    }

    func testAFileTheShellWroteWithAnOlderTableGetsTheMissingColumnAndKeepsItsRows() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("older.db")
        // An older version of the app: no editorID in book, no bio table.
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE book(id INTEGER PRIMARY KEY, authorID INTEGER NOT NULL, title TEXT NOT NULL, year INTEGER NOT NULL);
            INSERT INTO author(id, name) VALUES (1, 'Le Guin');
            INSERT INTO book(id, authorID, title, year) VALUES (1, 1, 'The Dispossessed', 1974);
            """)
        let database = try Database(path: path, configuration: configuration())
        XCTAssertEqual(try columns("book", database), ["id", "authorID", "title", "year", "editorID"])
        XCTAssertEqual(try columns("bio", database), ["id", "authorID", "text"])
        let loaded = try database.read { db in try Author.including(all: Author.books).fetchAll(db) }
        XCTAssertEqual(loaded.count, 1)
        XCTAssertEqual(loaded.first?.1.map(\.title), ["The Dispossessed"])
        XCTAssertEqual(loaded.first?.1.first?.editorID, nil)
        try database.close()
    }

    func testAnUpgradeThatCannotBeMadeFailsTheOpenWithATypedErrorAndLeavesTheFileAsItWas() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("impossible.db")
        // book has rows and lacks `year`, a non-optional property without a default: no value for them.
        try Shell.sqlcipher(
            path,
            """
            CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE book(id INTEGER PRIMARY KEY, authorID INTEGER NOT NULL, title TEXT NOT NULL);
            INSERT INTO author(id, name) VALUES (1, 'Le Guin');
            INSERT INTO book(id, authorID, title) VALUES (1, 1, 'Lavinia');
            """)
        XCTAssertThrowsError(try Database(path: path, configuration: configuration())) { error in
            guard let error = error as? CofferError else { return XCTFail("not a CofferError: \(error)") }
            XCTAssertTrue(error.message.contains("at open"), error.message)
        }
        // Nothing of the upgrade was committed: no bio table, book unchanged (read by the shell).
        let tables = try Shell.sqlcipher(
            path, passphrase: "pw", "SELECT group_concat(name) FROM sqlite_master WHERE type = 'table';"
        ).stdout
        XCTAssertTrue(tables.contains("author,book"), tables)
        XCTAssertFalse(tables.contains("bio"), tables)
        let plain = Configuration(encryption: .passphrase("pw"))
        let database = try Database(path: path, configuration: plain)
        XCTAssertEqual(try columns("book", database), ["id", "authorID", "title"])
        try database.close()
    }

    func testAReadOnlyOpenLeavesTheSchemaAlone() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("readonly.db")
        try Shell.sqlcipher(path, "CREATE TABLE author(id INTEGER PRIMARY KEY, name TEXT NOT NULL);")
        var configuration = configuration()
        configuration.readOnly = true
        let database = try Database(path: path, configuration: configuration)
        XCTAssertEqual(try names("SELECT name FROM sqlite_master WHERE type = 'table'", database), ["author"])
        try database.close()
    }
}
