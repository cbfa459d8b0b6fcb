import Coffer
import Foundation

@Table("conversation")
struct Conversation: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var title: String
    var archived: Bool
}

@Table("message")
struct Message: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var body: String
    @Column(default: 0) var score: Double
    var createdAt: Date

    static var indexes: [TableIndex<Message>] { [TableIndex(columns.conversationID, columns.createdAt)] }
    static var constraints: [TableConstraint<Message>] {
        [
            .foreignKey(columns.conversationID, references: Conversation.columns.id, onDelete: .cascade),
            .check(columns.score >= 0),
        ]
    }
}

@Table("user")
struct User: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(unique: true) var email: String?
    var name: String
    @Column(default: 0) var visits: Int
}

@Table("membership")
struct Membership: Codable, Equatable {
    var groupID: Int64
    var userID: Int64
    var role: String

    static var constraints: [TableConstraint<Membership>] { [.primaryKey(columns.groupID, columns.userID)] }
    static var withoutRowID: Bool { true }
}

/// A test database in a temporary directory, encrypted with a random key.
func makeDatabase() throws -> Database { try Database.temporary() }

/// A database with the conversation/message/user/membership tables.
func makeSchemaDatabase() throws -> Database {
    let database = try makeDatabase()
    _ = try database.write { db in
        try db.upgradeSchema(for: [Conversation.self, Message.self, User.self, Membership.self])
    }
    return database
}

let referenceDate = Date(timeIntervalSince1970: 1_700_000_000.25)

/// Inserts the two conversations the query tests file messages under: "work" (active) and "old"
/// (archived); returns their ids.
func insertWorkAndOldConversations(_ db: Connection) throws -> (work: Int64, old: Int64) {
    var work = Conversation(id: nil, title: "work", archived: false)
    var old = Conversation(id: nil, title: "old", archived: true)
    try work.insert(db)
    try old.insert(db)
    guard let workID = work.id, let oldID = old.id else { throw CofferError(code: .misuse, message: "no rowid") }
    return (workID, oldID)
}

/// The two conversations and `count` messages, every third filed under "old": message `n` (from 0) has
/// body "body n", score n mod 7 and is created n seconds after `referenceDate`. Returns the conversations.
@discardableResult
func insertConversationsAndMessages(_ db: Connection, count: Int) throws -> (work: Int64, old: Int64) {
    let (work, old) = try insertWorkAndOldConversations(db)
    for offset in 0..<count {
        var message = Message(
            id: nil, conversationID: offset % 3 == 0 ? old : work, body: "body \(offset)",
            score: Double(offset % 7), createdAt: referenceDate.addingTimeInterval(Double(offset)))
        try message.insert(db)
    }
    return (work, old)
}

/// Only stored instance properties become columns.
@Table
struct Gadget: Codable {
    @Column(primaryKey: true) var id: Int64?
    var name: String {
        didSet { renamed = true }
    }
    var renamed: Bool = false
    var label: String { "gadget \(name)" }
    static let kind = "gadget"
}

/// Column names follow a custom `CodingKeys`; a property it leaves out is no column.
@Table("legacy_contact")
struct LegacyContact: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var displayName: String
    var cachedInitials: String = ""

    enum CodingKeys: String, CodingKey {
        case id
        case displayName = "display_name"
    }
}
