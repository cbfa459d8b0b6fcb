import Coffer
import CofferTestSupport
import XCTest

/// A document store's full-text index over one attribute path: filled from the documents already
/// stored, kept in step by every write (put, re-put, batch, delete, delete by query), one FTS row per
/// string at the path (array elements too), compared with a model after random writes.
final class DocumentFullTextTests: XCTestCase {
    /// Words with no character in common, so a word is found exactly where the model put it.
    private static let words = ["alpha", "beta", "gamma", "delta", "会议", "草稿", "北京", "上海"]

    /// What the store should hold: each key's words at `title` and at `tags[]`, keys in creation order.
    private struct Model {
        var titles: [String: [String]] = [:]
        var tags: [String: [String]] = [:]
        var numbers: [String: Int] = [:]
        var order: [String] = []

        mutating func put(_ key: String, title: [String], tags: [String], number: Int) {
            if titles[key] == nil { order.append(key) }
            titles[key] = title
            self.tags[key] = tags
            numbers[key] = number
        }

        mutating func delete(_ key: String) {
            titles[key] = nil
            tags[key] = nil
            numbers[key] = nil
            order.removeAll { $0 == key }
        }

        func keys(with word: String, inTags: Bool) -> [String] {
            order.filter { ((inTags ? tags : titles)[$0] ?? []).contains(word) }
        }
    }

    private static func document(title: [String], tags: [String], number: Int) -> Document {
        ["title": .string(title.joined(separator: " ")), "tags": .array(tags.map { .string($0) }), "n": .int(Int64(number))]
    }

    func testSearchFollowsRandomWritesLikeAModel() throws {
        let database = try Database.inMemory()
        let titles = try DocumentStore(database: database, name: "titles")
        let tagged = try DocumentStore(database: database, name: "tagged")
        var model = Model()
        var random = SeededGenerator(seed: 0xD0C_F75)
        func randomWords() -> [String] { random.sample(Self.words, count: random.int(in: 0...3)) }
        func write(_ key: String, number: Int) throws {
            let (title, tags) = (randomWords(), randomWords())
            let document = Self.document(title: title, tags: tags, number: number)
            try titles.put(document, for: key)
            try tagged.put(document, for: key)
            model.put(key, title: title, tags: tags, number: number)
        }
        // Documents stored before the index exists are indexed when it is created.
        for number in 0..<20 { try write("k\(number)", number: number) }
        try titles.enableFullTextSearch(on: "title")
        try tagged.enableFullTextSearch(on: "tags[]")
        try titles.enableFullTextSearch(on: "tags[]")  // once only: still the title

        func check(_ step: Int) throws {
            for word in Self.words {
                let byTitle = try titles.search(matching: .term(word), limit: 1_000).map(\.key)
                XCTAssertEqual(byTitle, model.keys(with: word, inTags: false), "title \(word) after step \(step)")
                let byTag = try tagged.search(matching: .term(word), limit: 1_000).map(\.key)
                XCTAssertEqual(byTag, model.keys(with: word, inTags: true), "tags \(word) after step \(step)")
            }
        }
        try check(0)
        for step in 1...300 {
            let key = "k\(random.next(upTo: 40))"
            switch random.next(upTo: 10) {
            case 0...5:
                try write(key, number: step)
            case 6, 7:
                _ = try titles.delete(key)
                _ = try tagged.delete(key)
                model.delete(key)
            case 8:
                let (title, tags) = (randomWords(), randomWords())
                let other = "k\(random.next(upTo: 40))"
                for store in [titles, tagged] {
                    try store.batch { batch in
                        try batch.put(Self.document(title: title, tags: tags, number: step), for: key)
                        _ = try batch.delete([other])
                    }
                }
                model.put(key, title: title, tags: tags, number: step)
                model.delete(other)  // after the put: the batch deletes it even when it is `key`
            default:
                let query = DocumentQuery(DocumentField("n") < .int(Int64(step / 3)))
                _ = try titles.delete(matching: query)
                _ = try tagged.delete(matching: query)
                for key in model.order where model.numbers[key, default: 0] < step / 3 { model.delete(key) }
            }
            if step % 25 == 0 { try check(step) }
        }
        try check(301)
    }

    func testPinyinContactsAndLimits() throws {
        let database = try Database.inMemory()
        let contacts = try DocumentStore(database: database, name: "contacts")
        try contacts.enableFullTextSearch(on: "name", tokenizer: .pinyin)
        try contacts.put(["name": "张三", "city": "北京"], for: "c1")
        try contacts.put(["name": "李四", "city": "上海"], for: "c2")
        try contacts.put(["name": "張三豐"], for: "c3")
        for typed in ["zhangs", "zs", "张s", "zhs", "張三"] {
            XCTAssertEqual(try contacts.search(matching: .pinyin(typed)).map(\.key), ["c1", "c3"], typed)
        }
        XCTAssertEqual(try contacts.search(matching: .pinyin("zhangs"), limit: 1).map(\.key), ["c1"])
        XCTAssertEqual(try contacts.search(matching: .pinyin("ls")).first?.document?["city"], .string("上海"))
        XCTAssertEqual(try contacts.search(matching: .nothing), [])
        XCTAssertEqual(try contacts.search(matching: .pinyin("zs"), limit: -3), [])

        struct Card: Codable, Equatable {
            var name: String
        }
        let cards = try contacts.search(Card.self, matching: .pinyin("lisi"))
        XCTAssertEqual(cards.map(\.key), ["c2"])
        XCTAssertEqual(cards.first?.value, Card(name: "李四"))

        // Dropping the store drops its index; a store re-created under the name starts without one.
        XCTAssertTrue(try DocumentStore.drop(named: "contacts", in: database))
        let count = try database.read {
            try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE 'doc-fts%'")
        }
        XCTAssertEqual(count, 0)
    }

    func testNonStringsAndOtherPathsAreNotIndexed() throws {
        let database = try Database.inMemory()
        let store = try DocumentStore(database: database, name: "mixed")
        try store.enableFullTextSearch(on: "body")
        try store.put(["body": .int(42), "other": "alpha"], for: "number")
        try store.put(["body": ["nested": "alpha"]], for: "object")
        try store.put(["body": "alpha beta"], for: "text")
        try store.put(.string("alpha"), for: "root")
        XCTAssertEqual(try store.search(matching: .term("alpha")).map(\.key), ["text"])
        XCTAssertEqual(try store.search(matching: .searchBox("alpha -beta")).map(\.key), [])
        try store.put(["body": "gamma"], for: "text")
        XCTAssertEqual(try store.search(matching: .term("alpha")).map(\.key), [])
        XCTAssertEqual(try store.search(matching: .term("gamma")).map(\.key), ["text"])
    }
}
