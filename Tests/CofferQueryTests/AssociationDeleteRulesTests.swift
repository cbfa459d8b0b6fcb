import Coffer
import XCTest

/// Deleting a parent row follows the ON DELETE rule its `ForeignKey` declares: Coffer opens every
/// connection with `PRAGMA foreign_keys = ON` (`Configuration.foreignKeysEnabled`, on by default), so
/// SQLite deletes an author's books (CASCADE) and clears the books they edited (SET NULL).
final class AssociationDeleteRulesTests: XCTestCase {
    func testEveryConnectionEnforcesForeignKeysByDefault() throws {
        let database = try makeLibraryDatabase()
        XCTAssertEqual(try database.write { try $0.fetchValue(Int.self, sql: "PRAGMA foreign_keys") }, 1)
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA foreign_keys") }, 1)
        let sql = try database.read {
            try $0.fetchValue(String.self, sql: "SELECT sql FROM sqlite_master WHERE name = 'book'")
        }
        XCTAssertTrue(sql?.contains("REFERENCES \"author\" (\"id\") ON DELETE CASCADE") == true, sql ?? "no table")
        XCTAssertTrue(sql?.contains("ON DELETE SET NULL") == true, sql ?? "no table")
    }

    func testDeletingAnAuthorDeletesTheirBooksAndClearsTheBooksTheyEdited() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            let authors = try insertLibrary(db, authors: 10)
            let (gone, editor) = (authors[4], authors[7])
            guard let goneID = gone.id, let editorID = editor.id else { return XCTFail("no ids") }
            _ = try Book.filter { $0.authorID != goneID }.updateAll(db) { [$0.editorID.set(to: editorID)] }
            let booksBefore = try Book.fetchCount(db)
            let edited = try Book.filter { $0.editorID == editorID }.fetchCount(db)
            XCTAssertEqual(try Book.filter { $0.authorID == goneID }.fetchCount(db), 4)
            XCTAssertGreaterThan(edited, 0)

            XCTAssertTrue(try gone.delete(db))
            XCTAssertEqual(try Book.filter { $0.authorID == goneID }.fetchCount(db), 0, "CASCADE")
            XCTAssertEqual(try Book.fetchCount(db), booksBefore - 4)
            XCTAssertEqual(try Bio.filter { $0.authorID == goneID }.fetchCount(db), 0, "CASCADE (the bio)")

            XCTAssertTrue(try editor.delete(db))
            XCTAssertEqual(try Book.filter { $0.editorID == editorID }.fetchCount(db), 0, "SET NULL")
            XCTAssertEqual(try Book.filter { $0.authorID == editorID }.fetchCount(db), 0, "CASCADE")
            XCTAssertEqual(
                try Book.filter { $0.editorID == nil }.fetchCount(db), try Book.fetchCount(db),
                "every remaining book lost its editor")
            XCTAssertEqual(try Author.including(all: Author.books).fetchAll(db).count, 8)
        }
    }

    func testABookOfAMissingAuthorIsRefused() throws {
        let database = try makeLibraryDatabase()
        XCTAssertThrowsError(
            try database.write { db in
                var book = Book(id: nil, authorID: 12345, editorID: nil, title: "orphan", year: 2000)
                try book.insert(db)
            }
        ) { error in
            XCTAssertEqual((error as? CofferError)?.code, .constraintForeignKey, "\(error)")
        }
        XCTAssertEqual(try database.read { try Book.fetchCount($0) }, 0)
    }
}
