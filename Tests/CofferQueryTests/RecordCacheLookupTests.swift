import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// Primary-key lookups through the record cache: no SQL for a cached record, levels and cost limits,
/// and every kind of commit (records, raw SQL, another connection, another process) seen at once.
final class RecordCacheLookupTests: XCTestCase {
    func testCachedLookupsRunNoSQLAndUncachedTypesAlwaysDo() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 50)
        try warmContacts(database, ids: 1...50)
        try database.read { db in
            // The first cached lookup of a transaction opens and places its snapshot (PRAGMA data_version).
            let (first, placing) = try db.countingStatements { try CachedContact.fetchOne(db, id: 1) }
            XCTAssertEqual(first, CachedContact(id: 1, name: "name 1", score: 0))
            XCTAssertEqual(placing, 1)
            let (all, statements) = try db.countingStatements { try (1...50).map { try CachedContact.fetchOne(db, id: $0) } }
            XCTAssertEqual(statements, 0)
            XCTAssertEqual(all, try (1...50).map { try uncachedContact(db, id: $0) })
            // A missing row is not cached: it runs its query each time.
            let (missing, missingStatements) = try db.countingStatements { try CachedContact.fetchOne(db, id: 999) }
            XCTAssertNil(missing)
            XCTAssertEqual(missingStatements, 1)
            let (plain, plainStatements) = try db.countingStatements {
                try (1...10).map { try PlainContact.fetchOne(db, id: $0) }
            }
            XCTAssertEqual(plain.compactMap { $0?.name }, (1...10).map { "name \($0)" })
            XCTAssertEqual(plainStatements, 10)
        }
        // Seen as a TableRecord, a cached type still uses its cache.
        func lookUp<Record: TableRecord>(_ type: Record.Type, _ db: Connection) throws -> (Record?, Int) {
            try db.countingStatements { try Record.fetchOne(db, id: 7) }
        }
        try database.read { db in
            _ = try CachedContact.fetchOne(db, id: 1)
            let (record, statements) = try lookUp(CachedContact.self, db)
            XCTAssertEqual(record, CachedContact(id: 7, name: "name 7", score: 0))
            XCTAssertEqual(statements, 0)
        }
    }

    func testWritesByRecordsRawSQLAndSavepointsAreSeenByTheNextRead() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 20)
        try warmContacts(database, ids: 1...20)
        try database.write { db in
            var contact = try XCTUnwrap(CachedContact.fetchOne(db, id: 1))
            contact.name = "renamed"
            try contact.update(db)
            // Inside the write transaction, its own uncommitted change.
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 1)?.name, "renamed")
            try db.execute(sql: "UPDATE cached_contact SET score = 5 WHERE id = 2")
            try db.execute(sql: "DELETE FROM cached_contact WHERE id = 3")
            try? db.savepoint {
                try db.execute(sql: "UPDATE cached_contact SET name = 'rolled back' WHERE id = 4")
                throw CofferError(code: .abort, message: "undo")
            }
        }
        try database.writeWithoutTransaction { db in
            try db.execute(sql: "UPDATE cached_contact SET name = 'autocommit' WHERE id = 5")
        }
        XCTAssertThrowsError(
            try database.write { db in
                try db.execute(sql: "UPDATE cached_contact SET name = 'never' WHERE id = 6")
                throw CofferError(code: .abort, message: "roll back")
            })
        try database.read { db in
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 1)?.name, "renamed")
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 2)?.score, 5)
            XCTAssertNil(try CachedContact.fetchOne(db, id: 3))
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 4)?.name, "name 4")
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 5)?.name, "autocommit")
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 6)?.name, "name 6")
            for id in Int64(1)...20 { XCTAssertEqual(try CachedContact.fetchOne(db, id: id), try uncachedContact(db, id: id)) }
        }
        // A change SQLite reports wholesale (DELETE without WHERE) empties the cache.
        try database.write { db in try db.execute(sql: "DELETE FROM cached_contact") }
        try database.read { db in XCTAssertNil(try CachedContact.fetchOne(db, id: 7)) }
    }

    func testAnotherConnectionsAndAnotherProcesssCommitsAreSeenAtOnce() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 10)
        try warmContacts(database, ids: 1...10)
        let other = try Database(path: directory.path("contacts.db"), configuration: contactConfiguration())
        try other.write { db in try db.execute(sql: "UPDATE cached_contact SET name = 'other connection' WHERE id = 1") }
        try database.read { db in XCTAssertEqual(try CachedContact.fetchOne(db, id: 1)?.name, "other connection") }
        try other.close()

        try warmContacts(database, ids: 1...10)
        try Shell.sqlcipher(
            directory.path("contacts.db"), pageSize: 1024, "UPDATE cached_contact SET name = 'shell' WHERE id = 2;")
        try database.read { db in
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 2)?.name, "shell")
            XCTAssertEqual(try CachedContact.fetchOne(db, id: 1)?.name, "other connection")
        }
    }

    func testCostLimitBoundsTheCacheAndKeepsTheMostRecent() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 200)
        for _ in 0..<2 {
            try database.read { db in for id in Int64(1)...200 { _ = try SmallContact.fetchOne(db, id: id) } }
        }
        let usage = try XCTUnwrap(try cacheUsage(database)["small_contact"])
        XCTAssertLessThanOrEqual(usage.cost, 4_096)
        XCTAssertGreaterThan(usage.records, 5)
        XCTAssertLessThan(usage.records, 200)
        try database.read { db in
            _ = try SmallContact.fetchOne(db, id: 200)
            let (recent, recentStatements) = try db.countingStatements { try SmallContact.fetchOne(db, id: 199) }
            XCTAssertEqual(recent?.name, "name 199")
            XCTAssertEqual(recentStatements, 0)
            let (evicted, evictedStatements) = try db.countingStatements { try SmallContact.fetchOne(db, id: 1) }
            XCTAssertEqual(evicted?.name, "name 1")
            XCTAssertEqual(evictedStatements, 1)
        }
        // `all` keeps every record fetched.
        for _ in 0..<2 {
            try database.read { db in for id in Int64(1)...200 { _ = try ResidentContact.fetchOne(db, id: id) } }
        }
        XCTAssertEqual(try cacheUsage(database)["resident_contact"]?.records, 200)
    }

    func testRekeyAndCloseEmptyTheCache() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 30)
        try warmContacts(database, ids: 1...30)
        XCTAssertEqual(try cacheUsage(database)["cached_contact"]?.records, 30)
        try database.changePassphrase(to: .passphrase("new"))
        XCTAssertEqual(try cacheUsage(database)["cached_contact"]?.records, 0)
        try warmContacts(database, ids: 1...30)
        XCTAssertEqual(try database.read { try CachedContact.fetchOne($0, id: 3)?.name }, "name 3")
        let registry = try XCTUnwrap(try database.read { RecordCacheRegistry.of($0) })
        XCTAssertEqual(registry.usage.first { $0.table == "cached_contact" }?.records, 30)
        try database.close()
        XCTAssertEqual(registry.usage.map(\.records).reduce(0, +), 0)
    }
}
