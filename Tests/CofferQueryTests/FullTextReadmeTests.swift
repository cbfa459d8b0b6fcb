import Coffer
import CofferTestSupport
import XCTest

@Table("chat") private struct Chat: Codable {
    @Column(primaryKey: true) var id: Int64?
    var room: Int64
    var body: String
}

extension Chat: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Chat>(columns.body)  // tokenize=coffer, content="chat"
}

/// The "Full-text search" tour (FullTextSearch.md, "In brief", since the README became a front page),
/// compiled and run as written.
final class FullTextReadmeTests: XCTestCase {
    func testTheTourRunsAsWritten() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("chat.db"), configuration: Configuration(encryption: .passphrase("pw")))

        try database.write { db in
            try db.upgradeSchema(for: [Chat.self])  // creates chat_fts and its triggers
            for body in ["周末一起吃火锅吗？ hotpot on Saturday?", "火锅店订好了 🎉 table for six", "Saturday works"] {
                var chat = Chat(id: nil, room: 1, body: body)
                try chat.insert(db)
            }
        }
        let results = try database.read { db in
            try Chat.search(.searchBox("火锅 saturday")).filter { $0.room == 1 }.limit(20).fetchAll(db)
        }
        let best = results.first?.snippet()?.marked(open: "**", close: "**")
        // "周末一起吃**火锅**吗？ hotpot on **Saturday**?"
        let count = try database.read { try Chat.matching(.term("订好")).fetchCount($0) }  // 1

        XCTAssertEqual(results.map(\.record.id), [1])
        XCTAssertEqual(best, "周末一起吃**火锅**吗？ hotpot on **Saturday**?")
        XCTAssertEqual(count, 1)
    }
}
