import CSQLCipher
import Coffer
import Foundation

@Table("author") struct ShelfAuthor: Codable {
    @Column(primaryKey: true) var id: Int64?
    var name: String

    static let books = hasMany(ShelfBook.self, using: ShelfBook.authorKey)
    /// The author's books, loaded lazily the first time they are read in a read closure.
    var books: [ShelfBook] { get throws { try ShelfAuthor.books.records(of: self) } }
}

@Table("book") struct ShelfBook: Codable {
    @Column(primaryKey: true) var id: Int64?
    var authorID: Int64
    var title: String
    var year: Int64

    static let authorKey = ForeignKey(columns.authorID, references: ShelfAuthor.columns.id, onDelete: .cascade)
    static var constraints: [TableConstraint<ShelfBook>] { [authorKey.constraint] }
    static var indexes: [TableIndex<ShelfBook>] { [TableIndex(columns.authorID)] }
}

/// W10 (associations): `authors` authors with `booksPerAuthor` books each, written by Coffer (the same
/// file shape for both sides; raw C opens it with the passphrase, or none in plaintext). `W10-including`: `pages` reads, each
/// loading a page of 100 authors (by id) with all their books — Coffer's `including(all:)`, raw C the
/// same two queries (`LIMIT 100 OFFSET ?`, then `WHERE authorID IN (?, … 100)`) stitched into a
/// dictionary by author. `W10-lazy`: `lookups` reads, each loading one author's books — Coffer by reading
/// a lazily loaded relationship property, raw C by its single `WHERE authorID = ?` query. One read
/// transaction per operation on both sides; both decode every column into structs with Swift strings.
struct AssociationWorkloads {
    let harness: Harness
    let authors: Int
    let booksPerAuthor: Int
    let pages: Int
    let lookups: Int
    let checksums: ChecksumLog

    static let pageSize = 100

    func run(_ impl: Implementation) throws -> [Measurement] {
        let path = harness.freshPath("w10")
        try fill(path, impl)
        let offsets = (0..<pages).map { Int64($0 * Self.pageSize % max(authors - Self.pageSize + 1, 1)) }
        let authorIDs = (0..<lookups).map { Int64($0 * 7 % authors + 1) }
        var including = 0.0
        var lazy = 0.0
        var sums: (Int64, Int64) = (0, 0)
        if impl.isRaw {
            let connection = try RawConnection(path: path, key: impl.rawKey, cacheKiB: harness.cacheKiB)
            let raw = try RawShelf(connection)
            defer { raw.finalize() }
            including = try harness.median(setUp: {}) { _ in sums.0 = try raw.pages(offsets) }
            lazy = try harness.median(setUp: {}) { _ in sums.1 = try raw.books(of: authorIDs) }
        } else {
            let database = try Database(path: path, configuration: harness.configuration(impl))
            defer { try? database.close() }
            let shelf = try database.read { try ShelfAuthor.order { [$0.id.asc] }.fetchAll($0) }
            let byID = Dictionary(uniqueKeysWithValues: shelf.map { ($0.id ?? 0, $0) })
            let loadedAuthors = try authorIDs.map { id in
                guard let author = byID[id] else { throw BenchError("W10: no author \(id)") }
                return author
            }
            including = try harness.median(setUp: {}) { _ in sums.0 = try Self.pages(offsets, database) }
            lazy = try harness.median(setUp: {}) { _ in sums.1 = try Self.books(of: loadedAuthors, database) }
        }
        checksums.record("W10-including", impl, sums.0)
        checksums.record("W10-lazy", impl, sums.1)
        return [
            Measurement(
                workload: "W10-including", impl: impl.rawValue, opsPerSecond: Double(pages) / including, seconds: including),
            Measurement(workload: "W10-lazy", impl: impl.rawValue, opsPerSecond: Double(lookups) / lazy, seconds: lazy),
        ]
    }

    /// Writes the authors and their books through Coffer, in one transaction (untimed).
    private func fill(_ path: String, _ impl: Implementation) throws {
        let database = try Database(path: path, configuration: harness.configuration(impl))
        defer { try? database.close() }
        try database.write { db in
            try db.upgradeSchema(for: [ShelfAuthor.self, ShelfBook.self])
            for n in 1...authors {
                var author = ShelfAuthor(id: Int64(n), name: "author \(n)")
                try author.insert(db)
                for k in 0..<booksPerAuthor {
                    var book = ShelfBook(id: nil, authorID: Int64(n), title: "book \(n).\(k)", year: Int64(1950 + (n + k) % 70))
                    try book.insert(db)
                }
            }
        }
    }

    /// Coffer: each page of authors with all their books, one read each; returns a checksum.
    private static func pages(_ offsets: [Int64], _ database: Database) throws -> Int64 {
        var sum: Int64 = 0
        for offset in offsets {
            let page = try database.read { db in
                try ShelfAuthor.order { [$0.id.asc] }.limit(pageSize, offset: Int(offset))
                    .including(all: ShelfAuthor.books).fetchAll(db)
            }
            for (author, books) in page { sum &+= checksum(author.id ?? 0, author.name, books.map { ($0.id ?? 0, $0.year) }) }
        }
        return sum
    }

    /// Coffer: each author's books read through the lazily loaded property, one read each.
    private static func books(of authors: [ShelfAuthor], _ database: Database) throws -> Int64 {
        var sum: Int64 = 0
        for author in authors {
            let books = try database.read { _ in try author.books }
            sum &+= checksum(author.id ?? 0, "", books.map { ($0.id ?? 0, $0.year) })
        }
        return sum
    }

    /// The checksum both sides compute: ids, name length, book ids and years.
    static func checksum(_ id: Int64, _ name: String, _ books: [(Int64, Int64)]) -> Int64 {
        books.reduce(id &* 31 &+ Int64(name.utf8.count)) { $0 &* 17 &+ $1.0 &+ $1.1 }
    }
}

/// Raw C's side of W10: prepared statements, values read by pointer and byte count.
private struct RawShelf {
    struct Author {
        let id: Int64
        let name: String
    }

    struct Book {
        let id: Int64
        let authorID: Int64
        let title: String
        let year: Int64
    }

    let connection: RawConnection
    let authorsPage: OpaquePointer
    let booksOfAuthors: OpaquePointer
    let booksOfAuthor: OpaquePointer

    init(_ connection: RawConnection) throws {
        self.connection = connection
        authorsPage = try connection.prepare("SELECT id, name FROM author ORDER BY id LIMIT ? OFFSET ?")
        let marks = Array(repeating: "?", count: AssociationWorkloads.pageSize).joined(separator: ", ")
        booksOfAuthors = try connection.prepare("SELECT id, authorID, title, year FROM book WHERE authorID IN (\(marks))")
        booksOfAuthor = try connection.prepare("SELECT id, authorID, title, year FROM book WHERE authorID = ?")
    }

    func finalize() {
        for statement in [authorsPage, booksOfAuthors, booksOfAuthor] { sqlite3_finalize(statement) }
    }

    /// Each page: the authors, then their books in one IN query, stitched by author id.
    func pages(_ offsets: [Int64]) throws -> Int64 {
        var sum: Int64 = 0
        for offset in offsets {
            let page = try connection.inReadTransaction { () throws -> [(Author, [Book])] in
                var authors: [Author] = []
                sqlite3_bind_int64(authorsPage, 1, Int64(AssociationWorkloads.pageSize))
                sqlite3_bind_int64(authorsPage, 2, offset)
                while sqlite3_step(authorsPage) == SQLITE_ROW {
                    authors.append(Author(id: sqlite3_column_int64(authorsPage, 0), name: Self.text(authorsPage, 1)))
                }
                sqlite3_reset(authorsPage)
                guard !authors.isEmpty else { return [] }
                for index in 0..<AssociationWorkloads.pageSize {
                    sqlite3_bind_int64(booksOfAuthors, Int32(index + 1), authors[min(index, authors.count - 1)].id)
                }
                var books: [Int64: [Book]] = [:]
                while sqlite3_step(booksOfAuthors) == SQLITE_ROW {
                    let book = Self.book(booksOfAuthors)
                    books[book.authorID, default: []].append(book)
                }
                sqlite3_reset(booksOfAuthors)
                return authors.map { ($0, books[$0.id] ?? []) }
            }
            for (author, books) in page {
                sum &+= AssociationWorkloads.checksum(author.id, author.name, books.map { ($0.id, $0.year) })
            }
        }
        return sum
    }

    /// Each author's books by its single query.
    func books(of authorIDs: [Int64]) throws -> Int64 {
        var sum: Int64 = 0
        for id in authorIDs {
            let books = try connection.inReadTransaction { () -> [Book] in
                var books: [Book] = []
                sqlite3_bind_int64(booksOfAuthor, 1, id)
                while sqlite3_step(booksOfAuthor) == SQLITE_ROW { books.append(Self.book(booksOfAuthor)) }
                sqlite3_reset(booksOfAuthor)
                return books
            }
            sum &+= AssociationWorkloads.checksum(id, "", books.map { ($0.id, $0.year) })
        }
        return sum
    }

    static func book(_ statement: OpaquePointer) -> Book {
        Book(
            id: sqlite3_column_int64(statement, 0), authorID: sqlite3_column_int64(statement, 1), title: text(statement, 2),
            year: sqlite3_column_int64(statement, 3))
    }

    static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        return String(
            decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
    }
}
