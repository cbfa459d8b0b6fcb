import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// `contains`, `hasPrefix` and `hasSuffix` match exactly when the pattern or the value holds a NUL: SQLite's
/// LIKE stops reading both at a NUL, so `"ab\0cd"` would match every text containing `"ab"`, and `"cd"`
/// would miss `"ab\0cd"`.
final class QueryNULPatternTests: XCTestCase {
    func testPrefixesWithoutNULStayLIKE() throws {
        XCTAssertEqual(
            try Message.filter { $0.body.hasPrefix("ab") }.select { $0.id }.build().sql,
            #"SELECT "id" FROM "message" WHERE ("body") LIKE ? ESCAPE '\'"#)
    }

    func testPatternsWithNULUseInstrAndByteComparisons() throws {
        let contains = try Message.filter { $0.body.contains("Ab\0cd") }.select { $0.id }.build()
        XCTAssertEqual(contains.sql, #"SELECT "id" FROM "message" WHERE instr(lower("body"), ?) > 0"#)
        XCTAssertEqual(contains.arguments, ["ab\0cd"])
        let prefix = try Message.filter { $0.body.hasPrefix("Ab\0") }.select { $0.id }.build()
        XCTAssertEqual(prefix.sql, #"SELECT "id" FROM "message" WHERE substr(CAST(lower("body") AS BLOB), 1, 3) = ?"#)
        XCTAssertEqual(prefix.arguments, [Data("ab\0".utf8)])
        let suffix = try Message.filter { $0.body.hasSuffix("\0é") }.select { $0.id }.build()
        XCTAssertEqual(suffix.sql, #"SELECT "id" FROM "message" WHERE substr(CAST(lower("body") AS BLOB), -3) = ?"#)
        XCTAssertEqual(suffix.arguments, [Data("\0é".utf8)])
    }

    func testPatternsWithNULMatchExactlyOnARealDatabase() throws {
        let database = try makeSchemaDatabase()
        defer { try? database.close() }
        let bodies = ["ab", "abXcd", "ab\0cd", "xAB\0CDy", "ab\0c", "cd", "\0cd", "ab\0", "b\0cd", "é\0É"]
        try database.write { db in
            let (work, _) = try insertWorkAndOldConversations(db)
            for body in bodies {
                var message = Message(id: nil, conversationID: work, body: body, score: 0, createdAt: referenceDate)
                try message.insert(db)
            }
        }
        func matching(_ predicate: @escaping (Message.Columns) -> SQLExpression<Message, Bool>) throws -> Set<String> {
            Set(try database.read { try Message.filter(predicate).select { $0.body }.fetchAll($0) })
        }
        // LIKE folds ASCII case only, so the exact forms do too.
        XCTAssertEqual(try matching { $0.body.contains("ab\0cd") }, ["ab\0cd", "xAB\0CDy"])
        XCTAssertEqual(try matching { $0.body.contains("\0") }, ["ab\0cd", "xAB\0CDy", "ab\0c", "\0cd", "ab\0", "b\0cd", "é\0É"])
        XCTAssertEqual(try matching { $0.body.hasPrefix("AB\0") }, ["ab\0cd", "ab\0c", "ab\0"])
        XCTAssertEqual(try matching { $0.body.hasSuffix("\0cd") }, ["ab\0cd", "\0cd", "b\0cd"])
        XCTAssertEqual(try matching { $0.body.hasSuffix("\0É") }, ["é\0É"], "non-ASCII letters keep their case")
        XCTAssertEqual(try matching { $0.body.hasSuffix("\0é") }, [])
        XCTAssertEqual(try matching { $0.body.hasPrefix("é\0") }, ["é\0É"])
        // Patterns without a NUL see past a NUL in the value.
        XCTAssertEqual(try matching { $0.body.contains("cD") }, ["abXcd", "ab\0cd", "xAB\0CDy", "cd", "\0cd", "b\0cd"])
        XCTAssertEqual(try matching { $0.body.hasSuffix("cd") }, ["abXcd", "ab\0cd", "cd", "\0cd", "b\0cd"])
        XCTAssertEqual(try matching { $0.body.hasPrefix("AB") }, ["ab", "abXcd", "ab\0cd", "ab\0c", "ab\0"])
        XCTAssertEqual(try matching { $0.body.hasSuffix("") }.count, bodies.count)
        XCTAssertEqual(try matching { $0.body.contains("") }.count, bodies.count)
    }
}
