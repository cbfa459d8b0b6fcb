import Coffer

/// A chat message with a full-text index over its body and sender (the full-text tests' table).
@Table("chat") struct ChatMessage: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var sender: String
    var body: String
}

extension ChatMessage: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<ChatMessage>(columns.body, columns.sender)
}
