import Coffer
import XCTest

/// Inserts, conflict resolution, emulated upsert, updates, deletes and batches.
final class RecordWriteTests: XCTestCase {
    private var database: Database!

    override func setUpWithError() throws { database = try makeSchemaDatabase() }
    override func tearDownWithError() throws { try database.close() }

    func testInsertAssignsRowIDToNilPrimaryKey() throws {
        try database.write { db in
            var first = User(id: nil, email: "a@x", name: "A", visits: 0)
            var second = User(id: nil, email: "b@x", name: "B", visits: 0)
            try first.insert(db)
            try second.insert(db)
            XCTAssertEqual(first.id, 1)
            XCTAssertEqual(second.id, 2)
            XCTAssertEqual(try User.order { $0.id.asc }.fetchAll(db), [first, second])
        }
    }

    func testConflictResolutions() throws {
        try database.write { db in
            var user = User(id: nil, email: "a@x", name: "A", visits: 1)
            try user.insert(db)
            var duplicate = User(id: nil, email: "a@x", name: "dup", visits: 9)
            XCTAssertThrowsError(try duplicate.insert(db)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .constraintUnique)
            }
            try duplicate.insert(db, onConflict: .ignore)
            XCTAssertEqual(try User.select { $0.name }.fetchAll(db), ["A"])
            XCTAssertNil(duplicate.id, "an ignored insert assigns no id")
            try duplicate.insert(db, onConflict: .replace)
            XCTAssertEqual(try User.select { $0.name }.fetchAll(db), ["dup"])
        }
    }

    func testUpsertOnUniqueNonPrimaryKeyColumnUpdatesTheExistingRow() throws {
        try database.write { db in
            var original = User(id: nil, email: "a@x", name: "A", visits: 1)
            try original.insert(db)
            var incoming = User(id: nil, email: "a@x", name: "A2", visits: 5)
            try incoming.upsert(db) { [$0.email] }
            XCTAssertEqual(incoming.id, original.id, "the upserted record learns the existing row's id")
            XCTAssertEqual(try User.fetchAll(db), [User(id: original.id, email: "a@x", name: "A2", visits: 5)])

            var fresh = User(id: nil, email: "b@x", name: "B", visits: 0)
            try fresh.upsert(db) { [$0.email] }
            XCTAssertEqual(fresh.id, 2)
            XCTAssertEqual(try User.fetchCount(db), 2)
        }
    }

    func testUpsertWithNullKeyAlwaysInserts() throws {
        try database.write { db in
            var first = User(id: nil, email: nil, name: "anon1", visits: 0)
            var second = User(id: nil, email: nil, name: "anon2", visits: 0)
            try first.upsert(db) { [$0.email] }
            try second.upsert(db) { [$0.email] }
            XCTAssertEqual(try User.filter { $0.email == nil }.fetchCount(db), 2, "NULLs never conflict")
            var byID = User(id: nil, email: "c@x", name: "C", visits: 0)
            try byID.upsert(db)
            XCTAssertEqual(byID.id, 3, "a nil primary key inserts")
        }
    }

    func testUpsertByPrimaryKeyAndCompositeKey() throws {
        try database.write { db in
            var user = User(id: 10, email: "a@x", name: "A", visits: 0)
            try user.upsert(db)
            user.name = "renamed"
            try user.upsert(db)
            XCTAssertEqual(try User.fetchAll(db), [user])

            var membership = Membership(groupID: 1, userID: 10, role: "member")
            try membership.upsert(db)
            membership.role = "admin"
            try membership.upsert(db)
            XCTAssertEqual(try Membership.fetchAll(db), [membership])
        }
    }

    func testUpsertTargetMustBeAKey() throws {
        try database.write { db in
            var user = User(id: nil, email: "a@x", name: "A", visits: 0)
            XCTAssertThrowsError(try user.upsert(db) { [$0.name] }) { error in
                XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
            }
            XCTAssertEqual(try User.fetchCount(db), 0)
        }
    }

    func testUpsertConflictOnAnotherUniqueColumnStillThrows() throws {
        try database.write { db in
            var a = User(id: 1, email: "a@x", name: "A", visits: 0)
            try a.insert(db)
            var clash = User(id: 2, email: "a@x", name: "B", visits: 0)
            XCTAssertThrowsError(try clash.upsert(db)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .constraintUnique)
            }
            XCTAssertEqual(try User.fetchAll(db), [a], "the failed upsert is rolled back alone")
        }
    }

    func testUpdateWithSetExpressionsAndDeleteWithPredicates() throws {
        try database.write { db in
            try User.insertAll(
                [
                    User(id: nil, email: "a@x", name: "A", visits: 1),
                    User(id: nil, email: "b@x", name: "B", visits: 2),
                    User(id: nil, email: nil, name: "C", visits: 3),
                ], db)
            let changed = try User.filter { $0.visits >= 2 }.updateAll(db) {
                [$0.visits.set(to: $0.visits + 10), $0.name.set(to: "big")]
            }
            XCTAssertEqual(changed, 2)
            XCTAssertEqual(try User.order { $0.id.asc }.select { $0.visits }.fetchAll(db), [1, 12, 13])
            XCTAssertEqual(try User.filter { $0.email == nil }.deleteAll(db), 1)
            XCTAssertEqual(try User.fetchCount(db), 2)
            XCTAssertThrowsError(try User.all().limit(1).deleteAll(db))
        }
    }

    func testRecordUpdateAndDeleteByPrimaryKey() throws {
        try database.write { db in
            var user = User(id: nil, email: "a@x", name: "A", visits: 0)
            try user.insert(db)
            user.visits = 7
            XCTAssertTrue(try user.update(db))
            XCTAssertEqual(try User.fetchAll(db), [user])
            XCTAssertTrue(try user.delete(db))
            XCTAssertFalse(try user.delete(db))
            XCTAssertEqual(try User.fetchCount(db), 0)
        }
    }

    func testBatchInsertIsAtomicAndReturnsRowIDs() throws {
        try database.write { db in
            let users = (0..<1000).map { User(id: nil, email: "u\($0)@x", name: "user \($0)", visits: $0) }
            let ids = try User.insertAll(users, db)
            XCTAssertEqual(ids, Array(1...1000))
            let clashing = [
                User(id: nil, email: "new@x", name: "n", visits: 0), User(id: nil, email: "u1@x", name: "dup", visits: 0),
            ]
            XCTAssertThrowsError(try User.insertAll(clashing, db))
            XCTAssertEqual(try User.fetchCount(db), 1000, "a failed batch leaves no row behind")
        }
    }

    func testCheckAndForeignKeyConstraintsAreEnforced() throws {
        try database.write { db in
            var orphan = Message(id: nil, conversationID: 42, body: "x", score: 0, createdAt: referenceDate)
            var negative = Message(id: nil, conversationID: 1, body: "x", score: -1, createdAt: referenceDate)
            var conversation = Conversation(id: nil, title: "t", archived: false)
            try conversation.insert(db)
            XCTAssertThrowsError(try negative.insert(db)) { error in
                XCTAssertEqual((error as? CofferError)?.code, .constraintCheck)
            }
            let foreignKeys = try db.fetchValue(Bool.self, sql: "PRAGMA foreign_keys") ?? false
            if foreignKeys {
                XCTAssertThrowsError(try orphan.insert(db))
            }
        }
    }
}
