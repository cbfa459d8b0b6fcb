import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// A review of a book: an author's reviews are reached through their books.
@Table("review")
struct Review: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var bookID: Int64
    var stars: Int

    static let bookKey = ForeignKey(columns.bookID, references: Book.columns.id, onDelete: .cascade)
    static var constraints: [TableConstraint<Review>] { [bookKey.constraint] }
}

extension Book {
    static let reviews = hasMany(Review.self, using: Review.bookKey)
}

extension Author {
    static let reviews = hasMany(Review.self, through: books, using: Book.reviews)
}

/// `hasMany(_:through:using:)` loaded with `including(all:)`: three statements, each author's reviews
/// of their books, checked against a join SQLite runs itself.
final class AssociationThroughTests: XCTestCase {
    /// 40 authors (every fifth without books), 120 books, 480 reviews written with SQL.
    private func library(in directory: TemporaryDirectory) throws -> Database {
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.recordTypes = [Author.self, Book.self, Review.self]
        let database = try Database(path: directory.path("reviews.db"), configuration: configuration)
        try database.write { db in
            for author in 1...40 {
                try db.execute(sql: "INSERT INTO author(id, name) VALUES (?, ?)", arguments: [author, "a\(author)"])
            }
            for book in 1...120 {
                var author = book % 40 + 1
                if author % 5 == 0 { author -= 1 }
                try db.execute(
                    sql: "INSERT INTO book(id, authorID, title, year) VALUES (?, ?, ?, 2000)",
                    arguments: [book, author, "b\(book)"])
            }
            for review in 1...480 {
                try db.execute(
                    sql: "INSERT INTO review(id, bookID, stars) VALUES (?, ?, ?)",
                    arguments: [review, (review * 7) % 120 + 1, (review * 13) % 5 + 1])
            }
        }
        return database
    }

    /// Each author's review ids by the join, in `order`.
    private func expected(_ database: Database, where condition: String, order: String) throws -> [Int64: [Int64]] {
        let rows = try database.read { db in
            try db.fetchAll(
                sql:
                    "SELECT book.authorID AS a, review.id AS r FROM review JOIN book ON book.id = review.bookID WHERE \(condition) ORDER BY \(order)"
            )
        }
        var byAuthor: [Int64: [Int64]] = [:]
        for row in rows {
            guard let author: Int64 = row["a"], let review: Int64 = row["r"] else { continue }
            byAuthor[author, default: []].append(review)
        }
        return byAuthor
    }

    func testEachAuthorGetsTheReviewsOfTheirBooksInTheAssociationsOrderInThreeStatements() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let database = try library(in: directory)
        let (loaded, statements) = try database.read { db in
            try db.countingStatements {
                try Author.order { [$0.id.asc] }
                    .including(all: Author.reviews.order { [$0.stars.desc, $0.id.asc] }).fetchAll(db)
            }
        }
        XCTAssertEqual(statements, 3)
        XCTAssertEqual(loaded.count, 40)
        let truth = try expected(database, where: "1", order: "review.stars DESC, review.id")
        for (author, reviews) in loaded {
            guard let id = author.id else { return XCTFail("no id") }
            XCTAssertEqual(reviews.compactMap(\.id), truth[id] ?? [], author.name)
            if id % 5 == 0 { XCTAssertEqual(reviews, [], "\(author.name) has no books") }
        }
        XCTAssertEqual(loaded.map(\.1.count).reduce(0, +), 480)
        try database.close()
    }

    func testTheAssociationsFilterKeepsOnlyMatchingReviews() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        let database = try library(in: directory)
        let loaded = try database.read { db in
            try Author.filter { $0.id <= 10 }.including(all: Author.reviews.filter { $0.stars >= 4 }.order { [$0.id.asc] })
                .fetchAll(db)
        }
        XCTAssertEqual(loaded.count, 10)
        let truth = try expected(database, where: "review.stars >= 4", order: "review.id")
        for (author, reviews) in loaded {
            XCTAssertEqual(reviews.compactMap(\.id), truth[author.id ?? 0] ?? [], author.name)
            XCTAssertTrue(reviews.allSatisfy { $0.stars >= 4 })
        }
        try database.close()
    }

    func testMoreKeysThanOneStatementBindsSplitBothLookupsInChunks() throws {
        let directory = try TemporaryDirectory()
        defer { withExtendedLifetime(directory) {} }
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.recordTypes = [Author.self, Book.self, Review.self]
        let database = try Database(path: directory.path("many.db"), configuration: configuration)
        // 1,200 authors, each with one book with one review: 1,200 keys in each lookup, two chunks each.
        try database.write { db in
            for sql in [
                "INSERT INTO author(id, name) SELECT i, 'a' || i FROM n",
                "INSERT INTO book(id, authorID, title, year) SELECT i, i, 'b' || i, 2000 FROM n",
                "INSERT INTO review(id, bookID, stars) SELECT i, i, i % 5 + 1 FROM n",
            ] {
                try db.execute(
                    sql: "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1200) " + sql)
            }
        }
        let (loaded, statements) = try database.read { db in
            try db.countingStatements { try Author.order { [$0.id.asc] }.including(all: Author.reviews).fetchAll(db) }
        }
        XCTAssertEqual(statements, 5, "origins, then two chunks of books and two of reviews")
        XCTAssertEqual(loaded.count, 1200)
        for (author, reviews) in loaded {
            XCTAssertEqual(reviews.map(\.id), [author.id], author.name)
        }
        try database.close()
    }
}
