import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Associations loaded eagerly: `including(all:)` in two statements (more only past SQLite's variable
/// limit), `including(required:)`/`including(optional:)` in one join, each checked against the records
/// the same question asks one query per parent, and the statements SQLite ran counted by its trace hook.
final class AssociationEagerLoadingTests: XCTestCase {
    func testIncludingAllLoadsEveryAuthorsBooksInTwoStatements() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 40)
            let association = Author.books.filter { $0.year >= 1997 }.order { [$0.year.desc, $0.title.asc] }
            let (loaded, statements) = try db.countingStatements {
                try Author.filter { $0.name != "author 3" }.order { [$0.name.desc] }.including(all: association)
                    .fetchAll(db)
            }
            XCTAssertEqual(statements, 2)

            // The same answer, one query per author (the N+1 the association replaces).
            let authors = try Author.filter { $0.name != "author 3" }.order { [$0.name.desc] }.fetchAll(db)
            XCTAssertEqual(loaded.map(\.0), authors)
            XCTAssertEqual(authors.count, 39)
            for (author, books) in loaded {
                let expected = try Book.filter { $0.authorID == (author.id ?? -1) && $0.year >= 1997 }
                    .order { [$0.year.desc, $0.title.asc] }.fetchAll(db)
                XCTAssertEqual(books, expected, author.name)
            }
            XCTAssertTrue(loaded.contains { $0.1.isEmpty }, "authors without a matching book get none")
            XCTAssertGreaterThan(loaded.map(\.1.count).reduce(0, +), 40)

            // A page of authors: the limit applies to the authors, each keeping all their books.
            let (page, pageStatements) = try db.countingStatements {
                try Author.order { [$0.name.desc] }.limit(10, offset: 5).including(all: association).fetchAll(db)
            }
            XCTAssertEqual(pageStatements, 2)
            XCTAssertEqual(page.map(\.0), try Author.order { [$0.name.desc] }.limit(10, offset: 5).fetchAll(db))
            for (author, books) in page {
                XCTAssertEqual(books, loaded.first { $0.0 == author }?.1 ?? [], author.name)
            }
        }
    }

    func testIncludingAllSplitsTheKeysUnderTheVariableLimit() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 2_100)
            let association = Author.books.filter { $0.title != "none" }
            let (loaded, statements) = try db.countingStatements { try Author.including(all: association).fetchAll(db) }
            // One statement for the authors, then 2,100 keys in chunks of 998 (999 variables less the filter's).
            XCTAssertEqual(statements, 1 + 3)
            XCTAssertEqual(loaded.count, 2_100)
            XCTAssertEqual(loaded.map(\.1.count).reduce(0, +), try Book.fetchCount(db))
            for (author, books) in loaded {
                XCTAssertTrue(books.allSatisfy { $0.authorID == author.id })
                XCTAssertEqual(books.count, Int(author.name.dropFirst("author ".count)).map { $0 % 5 })
            }
        }
    }

    func testKeyCountsShareAFewCachedStatementShapes() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 70)
            let before = db.preparedStatementCount
            for count in 1...70 {
                let loaded = try Author.order { [$0.id.asc] }.limit(count).including(all: Author.books).fetchAll(db)
                XCTAssertEqual(loaded.count, count)
                XCTAssertEqual(loaded.map(\.1.count), (0..<count).map { $0 % 5 })
            }
            // The authors' query is one shape (its limit is bound); the books' IN lists padded to 1, 2, 4,
            // … 128 keys are eight, not 70.
            XCTAssertLessThanOrEqual(db.preparedStatementCount - before, 1 + 8)
        }
    }

    func testIncludingAllWithNoParentsRunsOneStatement() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 5)
            let (loaded, statements) = try db.countingStatements {
                try Author.filter { $0.name == "nobody" }.including(all: Author.books).fetchAll(db)
            }
            XCTAssertTrue(loaded.isEmpty)
            XCTAssertEqual(statements, 1)
        }
    }

    func testIncludingRequiredPairsEachBookWithItsAuthorInOneStatement() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 12)
            let association = Book.author.filter { $0.name != "author 4" }.order { [$0.name.asc] }
            let (pairs, statements) = try db.countingStatements {
                try Book.filter { $0.year >= 1997 }.including(required: association).fetchAll(db)
            }
            XCTAssertEqual(statements, 1)
            let expected = try Book.filter { $0.year >= 1997 }.fetchAll(db).compactMap { book -> (Book, Author)? in
                guard let author = try Author.filter({ $0.id == book.authorID }).fetchOne(db), author.name != "author 4"
                else { return nil }
                return (book, author)
            }
            XCTAssertEqual(pairs.count, expected.count)
            XCTAssertGreaterThan(pairs.count, 0)
            XCTAssertEqual(pairs.map(\.1.name), pairs.map(\.1.name).sorted(), "ordered by the author's name")
            for (book, author) in pairs {
                XCTAssertEqual(book.authorID, author.id)
                XCTAssertTrue(expected.contains { $0.0 == book && $0.1 == author })
            }
        }
    }

    func testIncludingOptionalKeepsAuthorsWithoutAMatchingBio() throws {
        let database = try makeLibraryDatabase()
        try database.write { db in
            try insertLibrary(db, authors: 10)
            let (pairs, statements) = try db.countingStatements {
                try Author.order { [$0.id.asc] }.including(optional: Author.bio.filter { $0.text != "bio of 4" })
                    .fetchAll(db)
            }
            XCTAssertEqual(statements, 1)
            XCTAssertEqual(pairs.count, 10, "a left join keeps every author")
            for (n, (author, bio)) in pairs.enumerated() {
                XCTAssertEqual(author.name, "author \(n)")
                XCTAssertEqual(bio?.text, n % 2 == 0 && n != 4 ? "bio of \(n)" : nil)
                XCTAssertEqual(bio.map(\.authorID), bio == nil ? nil : author.id)
            }
        }
    }

    /// Associations.md's "Declaring" queries (once the README's tour), as written (its `Book` is this file's without the editor).
    func testTheReadmeTourQueriesRunAsWritten() throws {
        let database = try makeLibraryDatabase()
        _ = try database.write { db in try insertLibrary(db, authors: 8) }
        let shelves = try database.read { db in
            try Author.order { [$0.name.asc] }
                .including(all: Author.books.filter { $0.year >= 2000 }.order { [$0.year.desc] }).fetchAll(db)
        }
        let credited = try database.read { db in
            try Book.including(required: Book.author).fetchAll(db)
        }
        XCTAssertEqual(shelves.map(\.0.name), (0..<8).map { "author \($0)" })
        // Author 3 wrote 1998…2000, author 4 1999…2002: their books from 2000 on, newest first.
        XCTAssertEqual(shelves.map { $0.1.map(\.year) }, [[], [], [], [2000], [2002, 2001, 2000], [], [], []])
        XCTAssertEqual(credited.count, try database.read { try Book.fetchCount($0) })
    }
}
