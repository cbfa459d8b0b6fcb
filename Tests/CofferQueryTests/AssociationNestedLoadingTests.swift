import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Nested eager loading: authors with their books, each book with its editor (`including(required:)`,
/// `including(optional:)`) or its reviews (`including(all:)`), filters and ordering at both levels, in
/// the same number of statements for 3 authors as for 60 (counted by SQLite's trace hook), each checked
/// against the records the same question asks one query per parent.
final class AssociationNestedLoadingTests: XCTestCase {
    /// `authors` authors as `insertLibrary` makes them; a book of author n is edited by author n + 1,
    /// except for n divisible by 3 (no editor); every book gets `n % 3` reviews.
    private func library(authors: Int) throws -> Database {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [Review.self])
            let authors = try insertLibrary(db, authors: authors)
            for (n, author) in authors.enumerated() where n % 3 != 0 {
                guard let id = author.id, let editor = authors[(n + 1) % authors.count].id else { continue }
                _ = try Book.filter { $0.authorID == id }.updateAll(db) { [$0.editorID.set(to: editor)] }
                for book in try Book.filter({ $0.authorID == id }).fetchAll(db) {
                    for stars in 0..<(n % 3) {
                        var review = Review(id: nil, bookID: book.id ?? -1, stars: stars + 3)
                        try review.insert(db)
                    }
                }
            }
        }
        return database
    }

    private let books = Author.books.filter { $0.year >= 1996 }.order { [$0.year.desc, $0.title.asc] }

    /// Each author's books as `books` filters and orders them, one query per author.
    private func expectedBooks(of author: Author, _ db: Connection) throws -> [Book] {
        try Book.filter { $0.authorID == (author.id ?? -1) && $0.year >= 1996 }.order { [$0.year.desc, $0.title.asc] }
            .fetchAll(db)
    }

    func testBooksWithTheirRequiredEditorInTwoStatementsForAnyNumberOfAuthors() throws {
        for count in [3, 60] {
            let database = try library(authors: count)
            try database.read { db in
                let editors = Book.editor.filter { $0.name != "author 2" }
                let (loaded, statements) = try db.countingStatements {
                    try Author.order { [$0.name.desc] }.including(all: books.including(required: editors)).fetchAll(db)
                }
                XCTAssertEqual(statements, 2, "\(count) authors")
                XCTAssertEqual(loaded.map(\.0), try Author.order { [$0.name.desc] }.fetchAll(db))
                var pairs = 0
                for (author, elements) in loaded {
                    let expected = try expectedBooks(of: author, db).compactMap { book -> (Book, Author)? in
                        guard let editorID = book.editorID, let editor = try Author.filter({ $0.id == editorID }).fetchOne(db),
                            editor.name != "author 2"
                        else { return nil }
                        return (book, editor)
                    }
                    XCTAssertEqual(elements.map(\.0), expected.map(\.0), author.name)
                    XCTAssertEqual(elements.map(\.1), expected.map(\.1), author.name)
                    pairs += elements.count
                }
                XCTAssertGreaterThan(pairs, 0)
            }
        }
    }

    func testBooksWithTheirOptionalEditorKeepBooksWithoutOne() throws {
        let database = try library(authors: 30)
        try database.read { db in
            let (loaded, statements) = try db.countingStatements {
                try Author.including(all: books.including(optional: Book.editor)).fetchAll(db)
            }
            XCTAssertEqual(statements, 2)
            XCTAssertEqual(loaded.count, 30)
            var withoutEditor = 0
            for (author, elements) in loaded {
                XCTAssertEqual(elements.map(\.0), try expectedBooks(of: author, db), author.name)
                for (book, editor) in elements {
                    XCTAssertEqual(editor?.id, book.editorID)
                    if editor == nil { withoutEditor += 1 }
                }
            }
            XCTAssertGreaterThan(withoutEditor, 0)
        }
    }

    func testBooksWithAllTheirReviewsInThreeStatementsForAnyNumberOfAuthors() throws {
        for count in [3, 60] {
            let database = try library(authors: count)
            try database.read { db in
                let reviews = Book.reviews.filter { $0.stars > 3 }.order { [$0.stars.desc, $0.id.asc] }
                let (loaded, statements) = try db.countingStatements {
                    try Author.filter { $0.name != "author 1" }.including(all: books.including(all: reviews)).fetchAll(db)
                }
                XCTAssertEqual(statements, 3, "\(count) authors")
                XCTAssertEqual(loaded.map(\.0), try Author.filter { $0.name != "author 1" }.fetchAll(db))
                var reviewCount = 0
                for (author, elements) in loaded {
                    XCTAssertEqual(elements.map(\.0), try expectedBooks(of: author, db), author.name)
                    for (book, bookReviews) in elements {
                        let expected = try Review.filter { $0.bookID == (book.id ?? -1) && $0.stars > 3 }
                            .order { [$0.stars.desc, $0.id.asc] }.fetchAll(db)
                        XCTAssertEqual(bookReviews, expected, book.title)
                        reviewCount += bookReviews.count
                    }
                }
                XCTAssertGreaterThan(reviewCount, 0)
            }
        }
    }
}
