import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// The exact SQL each builder call produces (values always bound as `?`).
final class QuerySQLTests: XCTestCase {
    func testAllSelectsDeclaredColumns() throws {
        let (sql, arguments) = try Message.all().build()
        XCTAssertEqual(sql, #"SELECT "id", "conversationID", "body", "score", "createdAt" FROM "message""#)
        XCTAssertEqual(arguments, [])
    }

    func testFilterOrderLimit() throws {
        let (sql, arguments) =
            try Message
            .filter { $0.conversationID == 7 && $0.score > 0.5 }
            .order { [$0.createdAt.desc, $0.id.asc] }
            .limit(20, offset: 40)
            .build()
        XCTAssertEqual(
            sql,
            #"SELECT "id", "conversationID", "body", "score", "createdAt" FROM "message" WHERE (("conversationID") = (?)) AND (("score") > (?)) ORDER BY ("createdAt") DESC, ("id") ASC LIMIT ? OFFSET ?"#
        )
        XCTAssertEqual(arguments, [7, 0.5, 20, 40])
    }

    func testSeveralFiltersAreJoinedWithAnd() throws {
        let (sql, _) = try Message.filter { $0.score > 1 }.filter { $0.body != "x" }.select { $0.id }.build()
        XCTAssertEqual(sql, #"SELECT "id" FROM "message" WHERE (("score") > (?)) AND (("body") <> (?))"#)
    }

    func testNilComparisonsBecomeIsNull() throws {
        XCTAssertEqual(
            try User.filter { $0.email == nil }.select { $0.id }.build().sql, #"SELECT "id" FROM "user" WHERE ("email") IS NULL"#)
        XCTAssertEqual(
            try User.filter { $0.email != nil }.select { $0.id }.build().sql,
            #"SELECT "id" FROM "user" WHERE ("email") IS NOT NULL"#)
        XCTAssertEqual(
            try User.filter { $0.email.isNull }.select { $0.id }.build().sql, #"SELECT "id" FROM "user" WHERE ("email") IS NULL"#)
    }

    func testInListSubselectAndBetween() throws {
        XCTAssertEqual(
            try Message.filter { $0.id.in([1, 2, 3]) }.select { $0.body }.build().sql,
            #"SELECT "body" FROM "message" WHERE ("id") IN (?, ?, ?)"#)
        let archived = Conversation.filter { $0.archived == true }.select { $0.id }
        let (sql, arguments) = try Message.filter { $0.conversationID.in(archived) }.select { $0.body }.build()
        XCTAssertEqual(
            sql,
            #"SELECT "body" FROM "message" WHERE ("conversationID") IN (SELECT "id" FROM "conversation" WHERE ("archived") = (?))"#
        )
        XCTAssertEqual(arguments, [true])
        XCTAssertEqual(
            try Message.filter { $0.score.between(1, and: 2) }.select { $0.id }.build().sql,
            #"SELECT "id" FROM "message" WHERE ("score") BETWEEN ? AND ?"#)
    }

    func testLikeHelpersEscapeWildcards() throws {
        let (sql, arguments) = try Message.filter { $0.body.contains(#"50%_OFF\"#) }.select { $0.id }.build()
        XCTAssertEqual(sql, #"SELECT "id" FROM "message" WHERE instr(lower("body"), ?) > 0"#)
        XCTAssertEqual(arguments, [#"50%_off\"#], "instr takes the text as it is, lowered as LIKE folds case")
        let prefix = try Message.filter { $0.body.hasPrefix("a_") }.select { $0.id }.build()
        XCTAssertEqual(prefix.sql, #"SELECT "id" FROM "message" WHERE ("body") LIKE ? ESCAPE '\'"#)
        XCTAssertEqual(prefix.arguments, [#"a\_%"#])
        let suffix = try Message.filter { $0.body.hasSuffix("%") }.select { $0.id }.build()
        XCTAssertEqual(suffix.sql, #"SELECT "id" FROM "message" WHERE substr(CAST(lower("body") AS BLOB), -1) = ?"#)
        XCTAssertEqual(suffix.arguments, [Data("%".utf8)])
    }

    func testAggregatesGroupAndHaving() throws {
        let query = Message.group { $0.conversationID }
            .having { $0.score.sum() > 10 }
            .select {
                [$0.conversationID, countAll(Message.self), $0.score.average(), $0.score.min(), $0.score.max(), $0.score.total()]
            }
        let (sql, arguments) = try query.build()
        XCTAssertEqual(
            sql,
            #"SELECT "conversationID", count(*), avg("score"), min("score"), max("score"), total("score") FROM "message" GROUP BY "conversationID" HAVING (sum("score")) > (?)"#
        )
        XCTAssertEqual(arguments, [10.0])
    }

    func testCountExistsDeleteAndUpdate() throws {
        let query = Message.filter { $0.conversationID == 1 }
        XCTAssertEqual(try query.countFragment.render().sql, #"SELECT count(*) FROM "message" WHERE ("conversationID") = (?)"#)
        XCTAssertEqual(
            try query.limit(3).countFragment.render().sql,
            #"SELECT count(*) FROM (SELECT "id", "conversationID", "body", "score", "createdAt" FROM "message" WHERE ("conversationID") = (?) LIMIT ?)"#
        )
        XCTAssertEqual(
            try query.existsFragment.render().sql, #"SELECT EXISTS (SELECT 1 FROM "message" WHERE ("conversationID") = (?))"#)
        XCTAssertEqual(try query.deleteFragment.render().sql, #"DELETE FROM "message" WHERE ("conversationID") = (?)"#)
        let update = query.updateFragment([
            Message.columns.score.set(to: Message.columns.score + 1), Message.columns.body.set(to: "x"),
        ])
        let (sql, arguments) = try update.render()
        XCTAssertEqual(sql, #"UPDATE "message" SET "score" = ("score") + (?), "body" = ? WHERE ("conversationID") = (?)"#)
        XCTAssertEqual(arguments, [1.0, "x", 1])
    }

    func testJoinQualifiesColumns() throws {
        let (sql, arguments) = try Message.filter { $0.score > 1 }
            .join(Conversation.self) { message, conversation in message.conversationID == conversation.id }
            .filter { _, conversation in conversation.archived == false }
            .order { message, _ in [message.createdAt.desc] }
            .build()
        XCTAssertEqual(
            sql,
            #"SELECT "message"."id", "message"."conversationID", "message"."body", "message"."score", "message"."createdAt", "conversation"."id", "conversation"."title", "conversation"."archived" FROM "message" JOIN "conversation" ON ("message"."conversationID") = ("conversation"."id") WHERE (("message"."score") > (?)) AND (("conversation"."archived") = (?)) ORDER BY ("message"."createdAt") DESC"#
        )
        XCTAssertEqual(arguments, [1.0, false])
    }

    func testCreateTableSQL() throws {
        XCTAssertEqual(
            try Message.createTableSQL(),
            #"CREATE TABLE "message" ("id" INTEGER PRIMARY KEY, "conversationID" INTEGER NOT NULL, "body" TEXT NOT NULL, "score" REAL NOT NULL DEFAULT 0.0, "createdAt" REAL NOT NULL, FOREIGN KEY ("conversationID") REFERENCES "conversation" ("id") ON DELETE CASCADE ON UPDATE NO ACTION, CHECK (("score") >= (0.0)))"#
        )
        XCTAssertEqual(
            try User.createTableSQL(),
            #"CREATE TABLE "user" ("id" INTEGER PRIMARY KEY, "email" TEXT UNIQUE, "name" TEXT NOT NULL, "visits" INTEGER NOT NULL DEFAULT 0)"#
        )
        XCTAssertEqual(
            try Membership.createTableSQL(),
            #"CREATE TABLE "membership" ("groupID" INTEGER NOT NULL, "userID" INTEGER NOT NULL, "role" TEXT NOT NULL, PRIMARY KEY ("groupID", "userID")) WITHOUT ROWID"#
        )
        XCTAssertEqual(
            try Message.indexes[0].createSQL,
            #"CREATE INDEX "message_on_conversationID_createdAt" ON "message" ("conversationID", "createdAt")"#)
    }

    func testOnlyStoredPropertiesBecomeColumnsAndTheTypeNamesTheTable() throws {
        XCTAssertEqual(Gadget.tableName, "Gadget")
        XCTAssertEqual(Gadget.columnDefinitions.map(\.name), ["id", "name", "renamed"])
        XCTAssertEqual(
            try Gadget.createTableSQL(),
            #"CREATE TABLE "Gadget" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL, "renamed" INTEGER NOT NULL)"#)
    }

    func testCustomCodingKeysNameTheColumns() throws {
        XCTAssertEqual(LegacyContact.columnDefinitions.map(\.name), ["id", "display_name"])
        XCTAssertEqual(
            try LegacyContact.filter { $0.displayName == "Ann" }.build().sql,
            #"SELECT "id", "display_name" FROM "legacy_contact" WHERE ("display_name") = (?)"#)
        let database = try makeDatabase()
        try database.write { db in
            try db.upgradeSchema(for: [LegacyContact.self])
            var contact = LegacyContact(id: nil, displayName: "Ann", cachedInitials: "A")
            try contact.insert(db)
            XCTAssertEqual(try LegacyContact.fetchAll(db), [LegacyContact(id: 1, displayName: "Ann")])
        }
    }

    func testWriteSQL() throws {
        XCTAssertEqual(try User.insertSQL(.abort), #"INSERT INTO "user" ("id", "email", "name", "visits") VALUES (?, ?, ?, ?)"#)
        XCTAssertEqual(
            try User.insertSQL(.replace), #"INSERT OR REPLACE INTO "user" ("id", "email", "name", "visits") VALUES (?, ?, ?, ?)"#)
        XCTAssertEqual(
            try User.insertSQL(.ignore), #"INSERT OR IGNORE INTO "user" ("id", "email", "name", "visits") VALUES (?, ?, ?, ?)"#)
        XCTAssertEqual(
            try User.updateSQL(set: ["name", "visits"], target: ["email"]),
            #"UPDATE "user" SET "name" = ?, "visits" = ? WHERE "email" = ?"#)
    }

    func testSQLLiteralBindsValuesAndQuotesIdentifiers() throws {
        let hostile = #"x"); DROP TABLE t; --"#
        let (sql, arguments) = try SQL("SELECT * FROM \(identifier: hostile) WHERE a = \(hostile) AND b IN (\(list: [1, 2]))")
            .build()
        XCTAssertEqual(sql, #"SELECT * FROM "x""); DROP TABLE t; --" WHERE a = ? AND b IN (?, ?)"#)
        XCTAssertEqual(arguments, [hostile, 1, 2])
        XCTAssertThrowsError(try SQL("SELECT * FROM \(identifier: "a\u{0}b")").build())
        XCTAssertThrowsError(try SQL("SELECT * FROM \(identifier: "")").build())
    }
}
