import Coffer
import Foundation

/// An author: the parent of books (`hasMany`) and of at most one bio (`hasOne`).
@Table("author")
struct Author: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var name: String

    static let books = hasMany(Book.self, using: Book.authorKey)
    static let bio = hasOne(Bio.self, using: Bio.authorKey)
}

/// A book: belongs to its author (deleted with them) and optionally names an editor (cleared when the
/// editor is deleted).
@Table("book")
struct Book: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var authorID: Int64
    var editorID: Int64?
    var title: String
    var year: Int

    static let authorKey = ForeignKey(columns.authorID, references: Author.columns.id, onDelete: .cascade)
    static let editorKey = ForeignKey(columns.editorID, references: Author.columns.id, onDelete: .setNull)
    static var constraints: [TableConstraint<Book>] { [authorKey.constraint, editorKey.constraint] }
    static var indexes: [TableIndex<Book>] { [TableIndex(columns.authorID), TableIndex(columns.editorID)] }

    static let author = belongsTo(Author.self, using: authorKey)
}

/// An author's biography, one at most per author.
@Table("bio")
struct Bio: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(unique: true) var authorID: Int64
    var text: String

    static let authorKey = ForeignKey(columns.authorID, references: Author.columns.id, onDelete: .cascade)
    static var constraints: [TableConstraint<Bio>] { [authorKey.constraint] }
}

/// A database with the author/book/bio tables.
func makeLibraryDatabase() throws -> Database {
    let database = try makeDatabase()
    _ = try database.write { db in try db.upgradeSchema(for: [Author.self, Book.self, Bio.self]) }
    return database
}

/// Inserts `count` authors named "author <n>" (n from 0), author n having `n % 5` books of years
/// 1995 + n % 5 + k (k < n % 5) and, for even n, a bio; returns the authors in insertion order.
@discardableResult
func insertLibrary(_ db: Connection, authors count: Int) throws -> [Author] {
    var authors: [Author] = []
    for n in 0..<count {
        var author = Author(id: nil, name: "author \(n)")
        try author.insert(db)
        guard let authorID = author.id else { throw CofferError(code: .misuse, message: "no rowid") }
        for k in 0..<(n % 5) {
            var book = Book(id: nil, authorID: authorID, editorID: nil, title: "book \(n).\(k)", year: 1995 + n % 5 + k)
            try book.insert(db)
        }
        if n % 2 == 0 {
            var bio = Bio(id: nil, authorID: authorID, text: "bio of \(n)")
            try bio.insert(db)
        }
        authors.append(author)
    }
    return authors
}
