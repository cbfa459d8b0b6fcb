import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A page's visit counter: `page` is UNIQUE.
@Table("visit")
struct Visit: Codable, Equatable {
    @Column(primaryKey: true) var id: Int64?
    @Column(unique: true) var page: String
    var title: String
    var count: Int64
}

/// Writes that return their rows (`RETURNING`, native UPSERT) where the linked SQLite has them (SQLCipher 4.5
/// and later), and a typed `unsupportedByLibrary` error with nothing written where it does not (3.4.1).
final class ReturningWriteTests: XCTestCase {
    private var directory: TemporaryDirectory!
    private var database: Database!

    override func setUpWithError() throws {
        directory = try TemporaryDirectory("coffer-returning")
        database = try Database(path: directory.path("visits.db"), configuration: Configuration(encryption: .passphrase("r")))
        try database.write { db in
            _ = try db.upgradeSchema(for: [Visit.self, ChatLine.self])
            // A trigger the record does not know about: RETURNING must show its change.
            try db.execute(
                sql: "CREATE TRIGGER visit_title AFTER INSERT ON visit WHEN NEW.title = '' BEGIN "
                    + "UPDATE visit SET title = 'untitled ' || NEW.page WHERE id = NEW.id; END")
        }
    }

    override func tearDownWithError() throws {
        try database?.close()
        database = nil
        directory = nil
    }

    private func storedVisits() throws -> [[String]] {
        try database.read { db in
            try db.fetchAll(sql: "SELECT id, page, title, count FROM visit ORDER BY id").map { row in
                try (0..<4).map { try row.decode(String.self, at: $0) }
            }
        }
    }

    func testEveryReturningWriteThrowsUnsupportedAndWritesNothingOnALibraryWithoutIt() throws {
        try XCTSkipIf(LinkedSQLite.supports(.returning), "SQLite \(LinkedSQLite.version) has RETURNING")
        try database.write { db in
            var visit = Visit(id: nil, page: "/a", title: "A", count: 1)
            try visit.insert(db)
        }
        let before = try storedVisits()
        let calls: [(String, (Connection) throws -> Void)] = [
            ("insertAndFetch", { _ = try Visit(id: nil, page: "/b", title: "B", count: 1).insertAndFetch($0) }),
            (
                "upsertAndFetch",
                { _ = try Visit(id: nil, page: "/a", title: "A2", count: 1).upsertAndFetch($0, onConflict: { [$0.page] }) }
            ),
            ("deleteAndFetchAll", { _ = try Visit.filter { $0.page == "/a" }.deleteAndFetchAll($0) }),
            ("updateAndFetchAll", { _ = try Visit.all().updateAndFetchAll($0) { [$0.count.set(to: 9)] } }),
        ]
        for (name, call) in calls {
            XCTAssertThrowsError(try database.write { try call($0) }, name) { error in
                XCTAssertEqual((error as? CofferError)?.code, .unsupportedByLibrary, "\(name): \(error)")
                let message = (error as? CofferError)?.message ?? ""
                XCTAssertTrue(message.contains(name) && message.contains("3.35"), message)
                XCTAssertTrue(message.contains(LinkedSQLite.version), message)
            }
        }
        XCTAssertEqual(try storedVisits(), before)
        // The portable forms still work on this library.
        try database.write { db in
            var visit = Visit(id: nil, page: "/a", title: "A3", count: 5)
            try visit.upsert(db, onConflict: { [$0.page] })
            XCTAssertEqual(visit.id, 1)
        }
        XCTAssertEqual(try storedVisits(), [["1", "/a", "A3", "5"]])
    }

    func testInsertAndFetchReturnsTheRowAsStoredWithTheTriggersChange() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.returning), "SQLite \(LinkedSQLite.version) has no RETURNING")
        let (first, ignored, plain) = try database.write { db in
            (
                try Visit(id: nil, page: "/home", title: "", count: 1).insertAndFetch(db),
                try Visit(id: nil, page: "/home", title: "again", count: 7).insertAndFetch(db, onConflict: .ignore),
                try Visit(id: 40, page: "/about", title: "About", count: 2).insertAndFetch(db)
            )
        }
        // RETURNING reports the row the INSERT wrote; the AFTER trigger's later UPDATE is not in it.
        XCTAssertEqual(first, Visit(id: 1, page: "/home", title: "", count: 1))
        XCTAssertNil(ignored)
        XCTAssertEqual(plain, Visit(id: 40, page: "/about", title: "About", count: 2))
        XCTAssertEqual(try storedVisits(), [["1", "/home", "untitled /home", "1"], ["40", "/about", "About", "2"]])
        XCTAssertThrowsError(
            try database.write { _ = try Visit(id: nil, page: "/home", title: "x", count: 1).insertAndFetch($0) }
        ) { XCTAssertEqual(($0 as? CofferError)?.code.primary, .constraint) }
    }

    func testUpsertAndFetchInsertsThenUpdatesInOneStatement() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.returning), "SQLite \(LinkedSQLite.version) has no RETURNING")
        try database.write { db in
            let inserted = try Visit(id: nil, page: "/p", title: "P", count: 1).upsertAndFetch(db, onConflict: { [$0.page] })
            XCTAssertEqual(inserted, Visit(id: 1, page: "/p", title: "P", count: 1))
            // Default: every column outside the target and the key takes the proposed value; the id stays.
            let replaced = try Visit(id: nil, page: "/p", title: "P2", count: 3).upsertAndFetch(db, onConflict: { [$0.page] })
            XCTAssertEqual(replaced, Visit(id: 1, page: "/p", title: "P2", count: 3))
            // A counter: the existing value plus the proposed one.
            for _ in 0..<4 {
                _ = try Visit(id: nil, page: "/p", title: "ignored", count: 10).upsertAndFetch(db, onConflict: { [$0.page] }) {
                    [$0.count.set(to: $0.count + $0.count.excluded)]
                }
            }
            // By primary key, with nothing but the key and the target to update: the row comes back unchanged.
            let same = try Visit(id: 1, page: "/p", title: "P9", count: 0).upsertAndFetch(db, doUpdate: { _ in [] })
            XCTAssertEqual(same, Visit(id: 1, page: "/p", title: "P2", count: 43))
        }
        XCTAssertEqual(try storedVisits(), [["1", "/p", "P2", "43"]])
        XCTAssertThrowsError(
            try database.write {
                _ = try Visit(id: nil, page: "/p", title: "", count: 1).upsertAndFetch($0, onConflict: { [$0.title] })
            }
        ) { XCTAssertEqual(($0 as? CofferError)?.code, .apiMisuse) }
    }

    func testDeleteAndUpdateAndFetchAllReturnTheRowsTheyChanged() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.returning), "SQLite \(LinkedSQLite.version) has no RETURNING")
        try database.write { db in
            for index in 1...10 {
                var visit = Visit(id: nil, page: "/\(index)", title: "T\(index)", count: Int64(index))
                try visit.insert(db)
            }
        }
        let bumped = try database.write { db in
            try Visit.filter { $0.count > 6 }.updateAndFetchAll(db) { [$0.count.set(to: $0.count * 10)] }
        }
        XCTAssertEqual(bumped.map(\.count).sorted(), [70, 80, 90, 100])
        let removed = try database.write { try Visit.filter { $0.count < 3 }.deleteAndFetchAll($0) }
        XCTAssertEqual(removed.map(\.page).sorted(), ["/1", "/2"])
        let left = try database.read { try Visit.order { $0.id.asc }.fetchAll($0) }
        XCTAssertEqual(left.map(\.count), [3, 4, 5, 6, 70, 80, 90, 100])
        // A rolled-back write loses what it returned.
        XCTAssertThrowsError(
            try database.write { db -> Void in
                _ = try Visit.all().deleteAndFetchAll(db)
                throw CofferError(code: .abort, message: "changed my mind")
            })
        XCTAssertEqual(try database.read { try Visit.fetchCount($0) }, 8)
    }

    func testReturningReadsCompressedColumnsPlainAndStoresThemCompressed() throws {
        try XCTSkipUnless(LinkedSQLite.supports(.returning), "SQLite \(LinkedSQLite.version) has no RETURNING")
        let text = String(repeating: "the same long chat line, again and again; ", count: 20)
        let (inserted, upserted) = try database.write { db in
            let inserted = try ChatLine(id: nil, kind: 0, content: text, attachment: Data(count: 4096)).insertAndFetch(db)
            let upserted = try ChatLine(id: 1, kind: 0, content: text + "!", attachment: nil).upsertAndFetch(
                db, doUpdate: { [$0.content.set(to: $0.content.excluded)] })
            return (inserted, upserted)
        }
        XCTAssertEqual(inserted?.content, text)
        XCTAssertEqual(inserted?.attachment, Data(count: 4096))
        XCTAssertEqual(upserted.content, text + "!")
        XCTAssertEqual(upserted.attachment, Data(count: 4096), "doUpdate named content only")
        let stored = try database.read { db in
            try db.fetchAll(sql: "SELECT typeof(content), length(content), coffer_decompress(content) FROM chat_line")
        }
        XCTAssertEqual(try stored[0].decode(String.self, at: 0), "blob")
        XCTAssertLessThan(try stored[0].decode(Int.self, at: 1), text.utf8.count / 4)
        XCTAssertEqual(try stored[0].decode(String.self, at: 2), text + "!")
        let deleted = try database.write { try ChatLine.all().deleteAndFetchAll($0) }
        XCTAssertEqual(deleted.map(\.content), [text + "!"])
    }
}
