import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The snapshot races of the record cache, each staged step by step on real threads: a reader older than
/// a cached record, a reader filling the cache from an old snapshot after a newer commit (and after
/// commits to other tables, which must not reach a type's cache), and a seeded
/// run of readers, a writer and raw SQL where every cached read equals an uncached read at the same
/// snapshot (also run under ThreadSanitizer by Tools/sanitize.sh).
final class RecordCacheSnapshotTests: XCTestCase {
    /// Runs `body` in a read on another thread; it calls its argument to pause until `resume` is signalled.
    private func pausedRead(
        _ database: Database, body: @escaping @Sendable (Connection, () -> Void) throws -> Void
    ) -> (paused: DispatchSemaphore, resume: DispatchSemaphore, done: DispatchGroup, failure: LockedBox<Error?>) {
        let paused = DispatchSemaphore(value: 0)
        let resume = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        let failure = LockedBox<Error?>(nil)
        done.enter()
        Thread.detachNewThread {
            defer { done.leave() }
            do {
                try database.read { db in
                    try body(db) {
                        paused.signal()
                        resume.wait()
                    }
                }
            } catch {
                failure.value = error
                paused.signal()
            }
        }
        return (paused, resume, done, failure)
    }

    func testAReaderOlderThanACachedRecordReadsItsOwnSnapshot() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 5)
        try warmContacts(database, ids: 1...5)
        let seen = LockedBox<[String?]>([])
        let reader = pausedRead(database) { db, pause in
            _ = try CachedContact.fetchOne(db, id: 2)  // the snapshot is open and placed
            pause()
            let cached = try CachedContact.fetchOne(db, id: 1)?.name
            seen.mutate { $0.append(cached) }
            let uncached = try uncachedContact(db, id: 1)?.name
            seen.mutate { $0.append(uncached) }
        }
        reader.paused.wait()
        try database.write { db in try db.execute(sql: "UPDATE cached_contact SET name = 'new' WHERE id = 1") }
        // A newer reader caches the new record.
        XCTAssertEqual(try database.read { try CachedContact.fetchOne($0, id: 1)?.name }, "new")
        XCTAssertEqual(try database.read { try CachedContact.fetchOne($0, id: 1)?.name }, "new")
        reader.resume.signal()
        reader.done.wait()
        XCTAssertNil(reader.failure.value)
        XCTAssertEqual(seen.value, ["name 1", "name 1"])
    }

    func testAReaderAtAnOldSnapshotDoesNotFillTheCacheAfterANewerCommit() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 5)
        try warmContacts(database, ids: 2...2)
        let seen = LockedBox<String?>(nil)
        let reader = pausedRead(database) { db, pause in
            _ = try CachedContact.fetchOne(db, id: 2)
            pause()
            seen.value = try CachedContact.fetchOne(db, id: 1)?.name  // a miss, read at the old snapshot
        }
        reader.paused.wait()
        try database.write { db in try db.execute(sql: "UPDATE cached_contact SET name = 'new' WHERE id = 1") }
        reader.resume.signal()
        reader.done.wait()
        XCTAssertNil(reader.failure.value)
        XCTAssertEqual(seen.value, "name 1")
        for _ in 0..<2 {
            try database.read { db in
                XCTAssertEqual(try CachedContact.fetchOne(db, id: 1)?.name, "new")
                XCTAssertEqual(try CachedContact.fetchOne(db, id: 2)?.name, "name 2")
            }
        }
    }

    func testATypeFirstLookedUpAtAnOldSnapshotAfterANewerCommitIsNotFilledFromIt() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 5)
        try warmContacts(database, ids: 2...2)  // the registry runs; ResidentContact has no store yet
        let seen = LockedBox<String?>(nil)
        let reader = pausedRead(database) { db, pause in
            _ = try CachedContact.fetchOne(db, id: 2)  // placed before the commit below
            pause()
            seen.value = try ResidentContact.fetchOne(db, id: 1)?.name  // creates the type's store
        }
        reader.paused.wait()
        try database.write { db in try db.execute(sql: "UPDATE resident_contact SET name = 'new' WHERE id = 1") }
        reader.resume.signal()
        reader.done.wait()
        XCTAssertNil(reader.failure.value)
        XCTAssertEqual(seen.value, "name 1")
        for _ in 0..<2 {
            XCTAssertEqual(try database.read { try ResidentContact.fetchOne($0, id: 1)?.name }, "new")
        }
    }

    func testCommitsToOtherTablesNeitherEmptyNorReachATypesCache() throws {
        let directory = try TemporaryDirectory()
        let database = try makeContactDatabase(in: directory, count: 5)
        try warmContacts(database, ids: 1...3)
        try database.read { db in _ = try ResidentContact.fetchOne(db, id: 1) }  // another type's store
        let reader = pausedRead(database) { db, pause in
            _ = try CachedContact.fetchOne(db, id: 1)  // placed before the commits below
            pause()
            // A miss at the old snapshot: kept only while no commit has reached cached_contact's store.
            _ = try CachedContact.fetchOne(db, id: 4)
        }
        reader.paused.wait()
        // A table no store follows, then another cached type's table.
        try database.write { db in try db.execute(sql: "UPDATE plain_contact SET name = 'new' WHERE id = 4") }
        try database.write { db in try db.execute(sql: "UPDATE resident_contact SET name = 'new' WHERE id = 4") }
        reader.resume.signal()
        reader.done.wait()
        XCTAssertNil(reader.failure.value)
        XCTAssertEqual(try cacheUsage(database)["cached_contact"]?.records, 4)
        try database.read { db in
            XCTAssertEqual(try ResidentContact.fetchOne(db, id: 4)?.name, "new")
            for id in Int64(1)...4 {
                let (contact, statements) = try db.countingStatements { try CachedContact.fetchOne(db, id: id) }
                XCTAssertEqual(contact?.name, "name \(id)")
                XCTAssertEqual(statements, 0, "contact \(id) stayed cached")
            }
        }
    }

    func testSeededReadersWriterAndRawSQLAlwaysAgreeWithUncachedReads() throws {
        let directory = try TemporaryDirectory()
        let rows: Int64 = 40
        let database = try makeContactDatabase(in: directory, count: Int(rows))
        try warmContacts(database, ids: 1...rows)
        let writing = LockedBox(true)
        let mismatches = LockedBox<[String]>([])
        let cachedLookups = LockedBox(0)
        let group = DispatchGroup()
        for reader in 0..<3 {
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                var generator = SeededGenerator(seed: 0xCAC4E + UInt64(reader))
                do {
                    while writing.value {
                        try database.read { db in
                            for _ in 0..<20 {
                                let id = Int64(generator.int(in: 1...Int(rows)))
                                let (cached, statements) = try db.countingStatements { try CachedContact.fetchOne(db, id: id) }
                                let uncached = try uncachedContact(db, id: id)
                                if cached != uncached {
                                    mismatches.mutate {
                                        $0.append("\(id): \(String(describing: cached)) ≠ \(String(describing: uncached))")
                                    }
                                }
                                if statements == 0 { cachedLookups.mutate { $0 += 1 } }
                            }
                        }
                    }
                } catch {
                    mismatches.mutate { $0.append("reader \(reader): \(error)") }
                }
            }
        }
        var generator = SeededGenerator(seed: 25)
        for step in 0..<300 {
            let id = Int64(generator.int(in: 1...Int(rows)))
            switch generator.next(upTo: 4) {
            case 0:
                try database.write { db in
                    if var contact = try CachedContact.fetchOne(db, id: id) {
                        contact.score += 1
                        _ = try contact.update(db)
                    } else {
                        var contact = CachedContact(id: id, name: "back \(step)", score: 0)
                        try contact.insert(db)
                    }
                }
            case 1:
                try database.write { db in try db.execute(sql: "UPDATE cached_contact SET name = 'raw \(step)' WHERE id = \(id)")
                }
            case 2:
                try database.writeWithoutTransaction { db in
                    try db.execute(sql: "DELETE FROM cached_contact WHERE id = \(id)")
                    try db.execute(sql: "INSERT INTO cached_contact(id, name, score) VALUES (\(id), 'again \(step)', \(step))")
                }
            default:
                // Let the readers fill the cache between commits.
                try database.read { db in _ = try CachedContact.fetchOne(db, id: id) }
            }
        }
        writing.value = false
        group.wait()
        XCTAssertEqual(mismatches.value, [])
        XCTAssertGreaterThan(cachedLookups.value, 0, "the cache answered some lookups")
    }
}

/// A value shared between test threads under a lock.
final class LockedBox<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Value
    init(_ value: Value) { stored = value }
    var value: Value {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
    func mutate(_ body: (inout Value) -> Void) { lock.withLock { body(&stored) } }
}
