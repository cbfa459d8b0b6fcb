import Coffer
import CofferTestSupport
import Foundation
import XCTest

// FullTextSearch.md, "Overview": the searchable record, as written there.
@Table("message") struct Message: Codable {
    @Column(primaryKey: true) var id: Int64?
    var conversationID: Int64
    var sender: String
    var body: String
}

extension Message: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Message>(columns.body, columns.sender)
}

// FullTextSearch.md, "Key-value stores", as written there.
struct Note: Codable, Sendable {
    var text: String
    static let text = KeyValueIndexField<Note, String>("text") { $0.text }
}

// FullTextSearch.md, "In brief", as written there.
@Table("chat") struct Chat: Codable {
    @Column(primaryKey: true) var id: Int64?
    var room: Int64
    var body: String
}
extension Chat: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Chat>(columns.body)  // tokenize=coffer, content="chat"
}

// FullTextSearch.md, "FTS5 on SQLCipher 4": the record, and its index as written there.
@Table("memo") struct Memo: Codable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
}

extension Memo: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Memo>(columns.body, engine: .fts5)
}

/// The ```swift blocks of FullTextSearch.md, compiled and run as written.
final class FullTextSearchArticleTests: XCTestCase {
    func testInBrief() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

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
        try database.close()
    }

    func testOverviewWritingSearchingAndResults() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        let text = "saturday"
        let id: Int64 = 7

        _ = try database.write { try $0.upgradeSchema(for: [Message.self]) }  // a SchemaUpgradeReport
        let page = try database.read { db in
            try Message.search(.searchBox(text)).filter { $0.conversationID == id }.limit(20).fetchAll(db)
        }
        XCTAssertEqual(page.count, 0)

        let messages = [
            Message(id: nil, conversationID: 7, sender: "Ana", body: "Hotpot on Saturday? 周末一起吃火锅"),
            Message(id: nil, conversationID: 7, sender: "Bo", body: "火锅店订好了, see you Saturday"),
            Message(id: nil, conversationID: 8, sender: "Cy", body: "Saturday works"),
        ]
        let rowIDs = try database.write { db in try Message.insertAll(messages, db) }  // [1, 2, 3]
        XCTAssertEqual(rowIDs, [1, 2, 3])

        let results = try database.read { db in
            try Message.search(.searchBox("火锅 hotpot")).filter { $0.conversationID == 7 }.limit(20).fetchAll(db)
        }
        let first = results.first  // FullTextResult<Message>?
        let sender = first?.record.sender  // "Ana"
        let rank = first?.rank ?? 0  // BM25, higher is better
        let highlight = first?.highlights.first  // the body's hits (the sender had none)
        let column = highlight?.column  // "body"
        let matched = highlight.map { hit in hit.ranges.map { String(hit.text[$0]) } }  // ["Hotpot", "火锅"]
        let snippet = first?.snippet()?.marked(open: "<b>", close: "</b>")
        // "<b>Hotpot</b> on Saturday? 周末一起吃<b>火锅</b>"

        XCTAssertEqual(results.map(\.record.id), [1])
        XCTAssertEqual(sender, "Ana")
        XCTAssertGreaterThan(rank, 0)
        XCTAssertEqual(first?.highlights.count, 1)
        XCTAssertEqual(column, "body")
        XCTAssertEqual(highlight?.text, "Hotpot on Saturday? 周末一起吃火锅")
        XCTAssertEqual(matched, ["Hotpot", "火锅"])
        XCTAssertEqual(snippet, "<b>Hotpot</b> on Saturday? 周末一起吃<b>火锅</b>")

        // Best first: the row with both words in the body outranks the one with one of them.
        let ranked = try database.read { db in try Message.search(.searchBox("saturday OR 火锅")).fetchAll(db) }
        XCTAssertEqual(ranked.map(\.rank), ranked.map(\.rank).sorted(by: >))
        XCTAssertEqual(Set(ranked.map(\.record.id)), [1, 2, 3])
        // The highlights follow the index's column order: body, then sender.
        let both = try database.read { db in try Message.search(.searchBox("bo OR 订好")).fetchAll(db) }
        XCTAssertEqual(both.first?.highlights.map(\.column), ["body", "sender"])
    }

    func testTheMergerRunsAsWritten() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        _ = try database.write { try $0.upgradeSchema(for: [Message.self]) }  // a SchemaUpgradeReport
        for number in 0..<40 {  // one segment per one-row transaction
            try database.write { db in
                var message = Message(id: nil, conversationID: 1, sender: "s", body: "message number \(number)")
                try message.insert(db)
            }
        }
        XCTAssertTrue(try database.read { try Message.fullTextIndex.needsMerge($0) })

        let merger = FullTextMerger(database: database, index: Message.fullTextIndex, interval: 5)
        // … the app runs; every 5 seconds a reader looks at the index, merges run between its transactions
        try merger.mergeUntilDone()  // or merge now, on this thread (going idle)
        merger.stop()  // before closing the database

        XCTAssertFalse(try database.read { try Message.fullTextIndex.needsMerge($0) })
        XCTAssertNil(merger.lastError)
        try database.write { try Message.fullTextIndex.checkIntegrity($0) }  // an FTS command: a write
        XCTAssertEqual(try database.read { try Message.matching(.term("number")).fetchCount($0) }, 40)
    }

    func testKeyValueStores() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let notes = try KeyValueStore(database: database, name: "notes", configuration: .init(indexes: [Note.text]))
        try notes.enableFullTextSearch(on: Note.text)  // creates the index once, fills it
        try notes.put(Note(text: "会议 notes for Monday"), for: "n1")
        let hits = try notes.search(Note.self, matching: .searchBox("会议"))  // [(key: "n1", value: Note)]

        XCTAssertEqual(hits.map(\.key), ["n1"])
        XCTAssertEqual(hits.first?.value.text, "会议 notes for Monday")
        try notes.enableFullTextSearch(on: Note.text)  // a second call does nothing
        XCTAssertEqual(try notes.search(Note.self, matching: .searchBox("monday")).count, 1)
    }

    func testDocumentStores() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }

        let contacts = try DocumentStore(database: database, name: "contacts")
        try contacts.enableFullTextSearch(on: "name", tokenizer: .pinyin)  // creates the index once, fills it
        try contacts.put(["name": "张三", "city": "北京"], for: "c1")
        try contacts.put(["name": "李四", "city": "上海"], for: "c2")
        let found = try contacts.search(matching: .pinyin("zhs"))  // [DocumentMatch]: c1
        let city = found.first?.document?["city"]  // .string("北京")

        XCTAssertEqual(found.map(\.key), ["c1"])
        XCTAssertEqual(city, .string("北京"))

        let notes = try DocumentStore(database: database, name: "notes")
        try notes.enableFullTextSearch(on: "tags[]")  // every element of the array
        try notes.put(["title": "Monday", "tags": ["会议纪要", "budget"]], for: "n1")
        let tagged = try notes.search(matching: .searchBox("会议"))  // n1

        XCTAssertEqual(tagged.map(\.key), ["n1"])
        XCTAssertEqual(try notes.search(matching: .searchBox("budget")).map(\.key), ["n1"])
    }

    func testFTS5OnSQLCipher4() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        guard LinkedSQLite.supports(.fts5) else {
            XCTAssertThrowsError(try database.write { try $0.upgradeSchema(for: [Memo.self]) }) { error in
                XCTAssertEqual((error as? CofferError)?.code, .unsupportedByLibrary)
            }
            return
        }
        _ = try database.write { try $0.upgradeSchema(for: [Memo.self]) }
        _ = try database.write { db in try Memo.insertAll([Memo(id: nil, body: "新年晚会 on Friday")], db) }
        let hits = try database.read { db in try Memo.search(.searchBox("晚会 fri*")).fetchAll(db) }
        XCTAssertEqual(hits.first?.snippet()?.marked(), "新年[晚会] on [Friday]")
        let expression = try FullTextPattern.prefix("fri").matchExpression(for: Memo.fullTextIndex.engine)
        XCTAssertEqual(expression, "\"fri\" *")
    }
}

// FullTextSearch.md, "Searching contacts by pinyin", as written there.
@Table("contact") struct Contact: Codable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
    var nickname: String
}

extension Contact: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Contact>(columns.name, columns.nickname, tokenizer: .pinyin)
}

// FullTextSearch.md, "Exact identifiers", as written there.
@Table("account") struct Account: Codable {
    @Column(primaryKey: true) var id: Int64?
    var phone: String
    var email: String
}

extension Account: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Account>(columns.phone, columns.email, tokenizer: .identifier)
}

/// FullTextSearch.md, "Searching contacts by pinyin" and "Exact identifiers", compiled and run as written.
final class FullTextSearchPinyinArticleTests: XCTestCase {
    func testContactSearchByPinyin() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        _ = try database.write { try $0.upgradeSchema(for: [Contact.self]) }

        let contacts = [Contact(id: nil, name: "张三", nickname: "Sam"), Contact(id: nil, name: "吕布", nickname: "")]
        _ = try database.write { db in try Contact.insertAll(contacts, db) }
        // The search box as the user types: "z", "zh", "zhangs", "zs", "张s", "zhang san", "張三"…
        let hits = try database.read { db in try Contact.search(.pinyin("zhangs")).limit(20).fetchAll(db) }
        let name = hits.first?.record.name  // "张三"
        let marked = hits.first?.snippet()?.marked()  // "[张三]"
        let lu = try database.read { db in try Contact.matching(.pinyin("lv")).fetchAll(db) }  // 吕布 (also "lü")

        XCTAssertEqual(name, "张三")
        XCTAssertEqual(marked, "[张三]")
        XCTAssertEqual(lu.map(\.name), ["吕布"])
        for typed in ["z", "zh", "zhangs", "zs", "张s", "zhang san", "張三", "sam"] {
            let found = try database.read { db in try Contact.matching(.pinyin(typed)).fetchAll(db) }
            XCTAssertEqual(found.map(\.name), ["张三"], typed)
        }
        XCTAssertEqual(try database.read { db in try Contact.matching(.pinyin("lü")).fetchAll(db) }.map(\.name), ["吕布"])
    }

    func testIdentifiers() throws {
        let (directory, database) = try articleDatabase()
        defer { withExtendedLifetime(directory) {} }
        _ = try database.write { try $0.upgradeSchema(for: [Account.self]) }

        let account = Account(id: nil, phone: "+86 138 0013 8000", email: "john.doe@example.com")
        _ = try database.write { db in try Account.insertAll([account], db) }
        let byPhone = try database.read { db in try Account.search(.searchBox("1380013")).fetchAll(db) }
        let matched = byPhone.first?.snippet()?.marked()  // "+86 [138 0013] 8000"
        let byMail = try database.read { db in try Account.matching(.searchBox("doe@exa")).fetchAll(db) }  // 1 row

        XCTAssertEqual(matched, "+86 [138 0013] 8000")
        XCTAssertEqual(byMail.count, 1)
    }
}
