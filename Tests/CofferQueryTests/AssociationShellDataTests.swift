import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Associations over rows another producer wrote: the `sqlcipher` shell (3.4.1) fills and prunes the
/// tables Coffer created, with foreign keys enforced as the schema Coffer wrote declares them, and Coffer
/// loads the result eagerly.
final class AssociationShellDataTests: XCTestCase {
    func testRowsTheShellWroteAndDeletedLoadWithTheirAuthorsInTwoStatements() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("library.db")
        let configuration = Configuration(encryption: .passphrase("pw"))
        let creator = try Database(path: path, configuration: configuration)
        _ = try creator.write { db in try db.upgradeSchema(for: [Author.self, Book.self, Bio.self]) }
        try creator.close()

        // 300 authors; book i (1…900) by author i % 300 + 1, edited by author (7i) % 300 + 1; then every
        // tenth author goes: their books by CASCADE, their editing by SET NULL.
        // The shell gets the raw key derived without Coffer (EncryptionAndKeys.md: PBKDF2-HMAC-SHA512 over the file's salt).
        try Shell.sqlcipher(
            path, key: try ShellRawKey.spec(passphrase: "pw", path: path),
            """
            PRAGMA foreign_keys = ON;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300)
            INSERT INTO author(id, name) SELECT i, 'author ' || i FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900)
            INSERT INTO book(id, authorID, editorID, title, year)
            SELECT i, i % 300 + 1, (7 * i) % 300 + 1, 'book ' || i, 1990 + i % 30 FROM n;
            DELETE FROM author WHERE id % 10 = 0;
            """)

        let database = try Database(path: path, configuration: configuration)
        let (loaded, statements) = try database.read { db in
            try db.countingStatements {
                try Author.order { [$0.id.asc] }.including(all: Author.books.order { [$0.id.asc] }).fetchAll(db)
            }
        }
        XCTAssertEqual(statements, 2)
        XCTAssertEqual(loaded.map(\.0.id), (1...300).filter { $0 % 10 != 0 }.map { Int64($0) })
        for (author, books) in loaded {
            guard let id = author.id else { return XCTFail("no id") }
            let expected = (1...900).filter { Int64($0 % 300 + 1) == id }
            XCTAssertEqual(books.compactMap(\.id), expected.map { Int64($0) }, author.name)
            for book in books {
                let editor = Int64((7 * Int(book.id ?? 0)) % 300 + 1)
                XCTAssertEqual(book.editorID, editor % 10 == 0 ? nil : editor, book.title)
            }
        }
        XCTAssertEqual(try database.read { try Book.fetchCount($0) }, 900 - 30 * 3, "the 30 deleted authors' books went")
        try database.close()
    }
}
