import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The "A screen's data, eager and lazy" tour (Associations.md since the README became a front page; compiled
/// there verbatim by CofferDocumentationTests), its declarations in a namespace of their own.
enum ScreenTour {
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

final class AssociationReadmeTourTests: XCTestCase {
    func testTheTourRunsAsWritten() throws {
        typealias User = ScreenTour.User
        typealias Conversation = ScreenTour.Conversation
        typealias Message = ScreenTour.Message
        let dir = try TemporaryDirectory()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        let since = start.addingTimeInterval(60)

        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.recordTypes = [User.self, Conversation.self, Message.self]  // tables made at open
        let database = try Database(path: dir.path("chat.db"), configuration: configuration)
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

        // Associations.md begins
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
        // Associations.md ends

        XCTAssertEqual(screen?.0.title, "family")
        XCTAssertEqual(screen?.1.map(\.0.body), ["m3", "m2", "m1"])
        XCTAssertEqual(screen?.1.map(\.1.name), ["bo", "ann", "bo"])
        XCTAssertEqual(sender?.name, "ann")
        XCTAssertThrowsError(try message?.sender) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
        }
    }
}
