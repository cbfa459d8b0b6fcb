import Coffer
import CofferTestSupport
import XCTest

/// An index over a column the table has but the record type does not declare (added by a migration's
/// SQL, declared through `FullTextIndex(columnNames:)`): the triggers keep it in step, `matching` finds
/// its rows, `insertAll` takes the per-row path, and a ranked search highlights it from the text it
/// selects beside the record's columns.
final class FullTextUndeclaredColumnTests: XCTestCase {
    func testAnIndexedColumnOutsideTheRecordIsSearchedAndHighlighted() throws {
        let database = try Database.inMemory()
        try database.write { db in
            // The table as a later migration left it: one column more than the type reads.
            try db.execute(sql: "CREATE TABLE tagged_note(id INTEGER PRIMARY KEY, body TEXT NOT NULL, tags TEXT)")
            _ = try db.upgradeSchema(for: [UndeclaredColumnNote.self])
            try UndeclaredColumnNote.insertAll(
                [UndeclaredColumnNote(id: nil, body: "lunch plans"), UndeclaredColumnNote(id: nil, body: "年会 agenda")], db)
            try db.execute(sql: "UPDATE tagged_note SET tags = '报销 travel' WHERE id = 2")
            try db.execute(sql: "INSERT INTO tagged_note(body, tags) VALUES ('quarterly report', 'travel 出差')")
        }
        try database.read { db in
            XCTAssertEqual(try UndeclaredColumnNote.matching(.term("travel")).fetchAll(db).map(\.id), [2, 3])
            XCTAssertEqual(try UndeclaredColumnNote.matching(.term("lunch")).fetchAll(db).map(\.id), [1])
            let results = try UndeclaredColumnNote.search(.term("出差")).fetchAll(db)
            XCTAssertEqual(results.map(\.record), [UndeclaredColumnNote(id: 3, body: "quarterly report")])
            let highlight = try XCTUnwrap(results.first?.highlights.first)
            XCTAssertEqual(highlight.column, "tags")
            XCTAssertEqual(highlight.text, "travel 出差")
            XCTAssertEqual(highlight.ranges.map { String(highlight.text[$0]) }, ["出差"])
            let both = try UndeclaredColumnNote.search(.term("年会") || .term("报销")).fetchAll(db)
            XCTAssertEqual(both.map(\.record.id), [2])
            XCTAssertEqual(both.first?.highlights.map(\.column), ["body", "tags"])
            try db.execute(sql: "INSERT INTO tagged_note_fts(tagged_note_fts) VALUES ('integrity-check')")
        }
    }
}

@Table("tagged_note") struct UndeclaredColumnNote: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    var body: String
}

extension UndeclaredColumnNote: FullTextSearchable {
    static let fullTextIndex = FullTextIndex<Self>(columnNames: ["body", "tags"])
}
