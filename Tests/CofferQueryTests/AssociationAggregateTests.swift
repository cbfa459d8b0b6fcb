import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Origins filtered, sorted and annotated by their associated records (`exists`, `count`, `max`,
/// `annotated(with:)`, `having`), each in one statement, checked against what one query per author says.
final class AssociationAggregateTests: XCTestCase {
    func testAuthorsFilteredByTheirBooksColumns() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 20)
            let (found, statements) = try db.countingStatements {
                try Author.filter { _ in Author.books.filter { $0.year >= 2000 }.exists }.order { [$0.id.asc] }.fetchAll(db)
            }
            XCTAssertEqual(statements, 1)
            let expected = try Author.order { [$0.id.asc] }.fetchAll(db).filter { author in
                try Book.filter { $0.authorID == (author.id ?? -1) && $0.year >= 2000 }.fetchCount(db) > 0
            }
            XCTAssertEqual(found, expected)
            XCTAssertFalse(found.isEmpty)
            XCTAssertLessThan(found.count, 20)
            // A to-one association filters too: books whose author is not author 4 (who wrote 4).
            let notByFour = try Book.filter { _ in Book.author.filter { $0.name != "author 4" }.exists }.fetchCount(db)
            XCTAssertEqual(notByFour, try Book.fetchCount(db) - 4)
        }
    }

    func testAuthorsAnnotatedSortedAndFilteredByTheirBookCount() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 20)
            let (rows, statements) = try db.countingStatements {
                try Author.order { _ in [Author.books.count.desc] }.order { [$0.id.asc] }
                    .annotated(with: Author.books.count).having { $0 >= 3 }.fetchAll(db)
            }
            XCTAssertEqual(statements, 1)
            var expected: [(Author, Int)] = []
            for author in try Author.order({ [$0.id.asc] }).fetchAll(db) {
                let count = try Book.filter { $0.authorID == (author.id ?? -1) }.fetchCount(db)
                if count >= 3 { expected.append((author, count)) }
            }
            expected.sort { ($0.1, $1.0.id ?? 0) > ($1.1, $0.0.id ?? 0) }  // count descending, then id
            XCTAssertEqual(rows.map(\.0), expected.map(\.0))
            XCTAssertEqual(rows.map(\.1), expected.map(\.1))
            XCTAssertEqual(rows.first?.1, 4)
            XCTAssertEqual(rows.count, 8, "authors n % 5 in 3...4")
        }
    }

    func testTheLatestYearOfEachAuthorsBooksIsNilWithoutBooks() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 6)
            let rows = try Author.order { [$0.id.asc] }.annotated(with: Author.books.max { $0.year }).fetchAll(db)
            // Author n has n % 5 books of years 1995 + n % 5 + k, k < n % 5.
            XCTAssertEqual(rows.map(\.1), [nil, 1996, 1998, 2000, 2002, nil])
        }
    }
}
