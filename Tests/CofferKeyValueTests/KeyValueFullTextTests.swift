import Coffer
import CofferTestSupport
import XCTest

private struct Note: Codable, Sendable, Equatable {
    var title: String
    var text: String
    static let text = KeyValueIndexField<Note, String>("text") { $0.text }
}

/// A key-value store's optional full-text index over one field: filled from existing items, kept in
/// step by every write (put, overwrite, delete, prefix delete, clear), CJK-aware.
final class KeyValueFullTextTests: XCTestCase {
    func testSearchFollowsEveryWriteOfTheStore() throws {
        let database = try Database.inMemory()
        let store = try KeyValueStore(database: database, name: "notes", configuration: .init(indexes: [Note.text]))
        try store.put(Note(title: "a", text: "明天上午开会 agenda attached"), for: "n1")
        try store.enableFullTextSearch(on: Note.text)
        try store.enableFullTextSearch(on: Note.text)  // once only
        try store.put(Note(title: "b", text: "会议纪要 minutes of the meeting"), for: "n2")
        try store.put(Note(title: "c", text: "shopping list"), for: "n3", in: "other")

        func keys(_ pattern: FullTextPattern, in bucket: String = KeyValueStore.defaultBucket) throws -> [String] {
            try store.search(Note.self, matching: pattern, in: bucket).map(\.key)
        }
        XCTAssertEqual(try keys(.term("开会")), ["n1"], "filled from the item stored before")
        XCTAssertEqual(try keys(.term("会")), ["n1", "n2"])
        XCTAssertEqual(try keys(.searchBox("meeting -agenda")), ["n2"])
        XCTAssertEqual(try keys(.term("shopping")), [], "another bucket")
        XCTAssertEqual(try keys(.term("shopping"), in: "other"), ["n3"])
        try store.put(Note(title: "b", text: "rewritten 改写"), for: "n2")
        XCTAssertEqual(try keys(.term("纪要")), [])
        XCTAssertEqual(try keys(.term("改写")), ["n2"])
        XCTAssertEqual(try store.search(Note.self, matching: .term("改写")).first?.value.title, "b")
        _ = try store.delete("n1")
        XCTAssertEqual(try keys(.term("开会")), [])
        try store.put(Note(title: "d", text: "draft 草稿"), for: "draft-1")
        XCTAssertEqual(try keys(.term("草稿")), ["draft-1"])
        _ = try store.delete(keysWithPrefix: "draft-")
        XCTAssertEqual(try keys(.term("草稿")), [])
        _ = try store.clear(bucket: KeyValueStore.defaultBucket)
        XCTAssertEqual(try keys(.term("改写")), [])
        let rows = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM \"kv-fts:notes\"") }
        XCTAssertEqual(rows, 1, "only the other bucket's item is left")
    }

    /// Dropping the store drops its full-text index and triggers too; a store re-opened under the name
    /// starts empty and can index again.
    func testDropRemovesTheFullTextIndex() throws {
        let database = try Database.inMemory()
        let store = try KeyValueStore(database: database, name: "notes", configuration: .init(indexes: [Note.text]))
        try store.enableFullTextSearch(on: Note.text)
        try store.put(Note(title: "a", text: "明天上午开会"), for: "n1")
        XCTAssertTrue(try KeyValueStore.drop(named: "notes", in: database))
        let left = try database.read {
            try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master WHERE name LIKE '%:notes'")
        }
        XCTAssertEqual(left, 0, "no table, index or trigger of the store is left")
        let again = try KeyValueStore(database: database, name: "notes", configuration: .init(indexes: [Note.text]))
        try again.enableFullTextSearch(on: Note.text)
        XCTAssertEqual(try again.search(Note.self, matching: .term("开会")).count, 0)
        try again.put(Note(title: "b", text: "开会"), for: "n2")
        XCTAssertEqual(try again.search(Note.self, matching: .term("开会")).map(\.key), ["n2"])
    }
}
