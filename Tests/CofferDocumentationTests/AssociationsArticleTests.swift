import Coffer
import CofferTestSupport
import Foundation
import XCTest

// Associations.md, "Declaring", as written there (`Author` is RecordCache.md's).
@Table("book") struct Book: Codable {
    @Column(primaryKey: true) var id: Int64?
    var authorID: Int64
    var title: String
    var year: Int
    static let authorKey = ForeignKey(columns.authorID, references: Author.columns.id, onDelete: .cascade)
    static var constraints: [TableConstraint<Book>] { [authorKey.constraint] }
    static let author = belongsTo(Author.self, using: authorKey)
}
extension Author { static let books = hasMany(Book.self, using: Book.authorKey) }

/// Associations.md, "A screen's data, eager and lazy": its declarations, in a namespace of their own.
enum ScreenArticle {
    @Table("user") struct User: Codable, Equatable {
        @Column(primaryKey: true) var id: Int64?
        var name: String
    }

    @Table("conversation") struct Conversation: Codable {
        @Column(primaryKey: true) var id: Int64?
        var title: String
        static let messages = hasMany(Message.self, using: Message.conversationKey)
    }

    @Table("message") struct Message: Codable {
        @Column(primaryKey: true) var id: Int64?
        var conversationID: Int64
        var senderID: Int64
        var body: String
        var sentAt: Date
        static let conversationKey = ForeignKey(
            columns.conversationID, references: Conversation.columns.id, onDelete: .cascade)
        static let senderKey = ForeignKey(columns.senderID, references: User.columns.id)
        static var constraints: [TableConstraint<Message>] { [conversationKey.constraint, senderKey.constraint] }
        static var indexes: [TableIndex<Message>] { [TableIndex(columns.conversationID, columns.sentAt)] }
        static let sender = belongsTo(User.self, using: senderKey)
        var sender: User? { get throws { try Message.sender.record(of: self) } }  // faulted when read
    }
}

/// The ```swift blocks of Associations.md, compiled and run as written.
final class AssociationsArticleTests: XCTestCase {
    func testDeclaring() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        try database.write { db in
            try db.upgradeSchema(for: [Author.self, Book.self])
            for name in ["Le Guin", "Butler"] {
                var author = Author(id: nil, name: name)
                try author.insert(db)
            }
            for (authorID, title, year) in [(1, "The Dispossessed", 1974), (1, "Lavinia", 2008), (2, "Fledgling", 2005)] {
                var book = Book(id: nil, authorID: Int64(authorID), title: title, year: year)
                try book.insert(db)
            }
        }

        let shelves = try database.read { db in  // [(Author, [Book])]: 2 statements for any number of authors
            try Author.order { [$0.name.asc] }
                .including(all: Author.books.filter { $0.year >= 2000 }.order { [$0.year.desc] }).fetchAll(db)
        }
        let credited = try database.read { db in  // [(Book, Author)]: one join
            try Book.including(required: Book.author).fetchAll(db)
        }

        XCTAssertEqual(shelves.map(\.0.name), ["Butler", "Le Guin"])
        XCTAssertEqual(shelves.map { $0.1.map(\.title) }, [["Fledgling"], ["Lavinia"]])
        let expected = ["Fledgling by Butler", "Lavinia by Le Guin", "The Dispossessed by Le Guin"]
        XCTAssertEqual(credited.map { "\($0.0.title) by \($0.1.name)" }.sorted(), expected)
        try database.close()
    }

    func testAScreensData() throws {
        typealias User = ScreenArticle.User
        typealias Conversation = ScreenArticle.Conversation
        typealias Message = ScreenArticle.Message
        let directory = try TemporaryDirectory("coffer-docs")
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let since = start.addingTimeInterval(60)
        var configuration = articleConfiguration
        configuration.recordTypes = [User.self, Conversation.self, Message.self]  // tables made at open
        let database = try Database(path: directory.path("chat.db"), configuration: configuration)
        try database.write { db in
            for name in ["ann", "bo"] {
                var user = User(id: nil, name: name)
                try user.insert(db)
            }
            for title in ["family", "work"] {
                var conversation = Conversation(id: nil, title: title)
                try conversation.insert(db)
            }
            for minute in 0..<4 {
                var message = Message(
                    id: nil, conversationID: 1, senderID: Int64(minute % 2 + 1), body: "m\(minute)",
                    sentAt: start.addingTimeInterval(Double(minute * 60)))
                try message.insert(db)
            }
        }

        let screen = try database.read { db in  // 2 statements, whatever the number of messages
            try Conversation.filter { $0.id == 1 }
                .including(
                    all: Conversation.messages.filter { $0.sentAt >= since }.order { [$0.sentAt.desc] }
                        .including(required: Message.sender)
                )
                .fetchAll(db).first
        }
        // screen?.1: [(Message, User)], newest first
        let message = try database.read { try Message.filter { $0.id == 1 }.fetchOne($0) }
        let sender = try database.read { _ in try message?.sender }  // one query, the first time read
        // try message?.sender outside a read or write closure throws CofferError .apiMisuse

        XCTAssertEqual(screen?.0.title, "family")
        XCTAssertEqual(screen?.1.map(\.0.body), ["m3", "m2", "m1"])
        XCTAssertEqual(screen?.1.map(\.1.name), ["bo", "ann", "bo"])
        XCTAssertEqual(sender?.name, "ann")
        XCTAssertThrowsError(try message?.sender) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
        }
        try database.close()
    }
}
