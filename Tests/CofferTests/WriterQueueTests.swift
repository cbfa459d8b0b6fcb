import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The writer's serial queue as callers meet it: values and errors come back through it unchanged, a
/// write inside a write is refused, a closed database refuses, and writes from many threads serialize.
final class WriterQueueTests: XCTestCase {
    private final class Token: @unchecked Sendable {
        static let lock = NSLock()
        nonisolated(unsafe) static var alive = 0
        let name: String
        init(_ name: String) {
            self.name = name
            Self.lock.withLock { Self.alive += 1 }
        }
        deinit { Self.lock.withLock { Self.alive -= 1 } }
    }

    private struct Wide: Equatable {
        var text: String
        var numbers: [Int]
        var a, b, c, d: Int
    }

    func testValuesOfEveryShapeComeBackFromAWriteAndAreReleasedOnce() throws {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE t(x TEXT)") }
        let text = try db.write { db -> String in
            try db.execute(sql: "INSERT INTO t VALUES ('a long enough string to live on the heap')")
            return try db.fetchAll(sql: "SELECT x FROM t").first?["x"] ?? ""
        }
        XCTAssertEqual(text, "a long enough string to live on the heap")
        let wide = try db.write { _ in Wide(text: "w", numbers: Array(0..<100), a: 1, b: 2, c: 3, d: 4) }
        XCTAssertEqual(wide, Wide(text: "w", numbers: Array(0..<100), a: 1, b: 2, c: 3, d: 4))
        let before = Token.lock.withLock { Token.alive }
        do {
            let token = try db.write { _ in Token("kept") }
            XCTAssertEqual(token.name, "kept")
            XCTAssertEqual(Token.lock.withLock { Token.alive }, before + 1)
        }
        XCTAssertEqual(Token.lock.withLock { Token.alive }, before, "the returned object is released exactly once")
        let nothing: Int? = try db.write { _ in nil }
        XCTAssertNil(nothing)
    }

    func testAThrownErrorComesBackAndNoValueIsLeft() throws {
        struct Refused: Error, Equatable { let code: Int }
        let db = try Database.temporary()
        let before = Token.lock.withLock { Token.alive }
        XCTAssertThrowsError(
            try db.write { _ -> Token in
                _ = Token("dropped")
                throw Refused(code: 7)
            }
        ) { XCTAssertEqual($0 as? Refused, Refused(code: 7)) }
        XCTAssertEqual(Token.lock.withLock { Token.alive }, before)
    }

    func testAWriteInsideAWriteIsRefusedAndTheOuterWriteStillCommits() throws {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        try db.write { connection in
            try connection.execute(sql: "INSERT INTO t VALUES (1)")
            XCTAssertThrowsError(try db.write { try $0.execute(sql: "INSERT INTO t VALUES (2)") }) { error in
                XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
            }
        }
        let count: Int? = try db.read { try $0.fetchAll(sql: "SELECT count(*) AS n FROM t").first?["n"] }
        XCTAssertEqual(count, 1)
    }

    func testAClosedDatabaseRefusesWrites() throws {
        let db = try Database.temporary()
        try db.close()
        XCTAssertThrowsError(try db.write { _ in 1 }) { error in
            XCTAssertEqual((error as? CofferError)?.code, .apiMisuse)
        }
    }

    func testWritesFromManyThreadsEachCommitOnce() throws {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE t(x INTEGER)") }
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for i in 0..<50 {
                let value = thread * 1_000 + i
                let echoed = try? db.write { db -> Int in
                    try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value])
                    return value
                }
                XCTAssertEqual(echoed, value)
            }
        }
        let count: Int? = try db.read { try $0.fetchAll(sql: "SELECT count(DISTINCT x) AS n FROM t").first?["n"] }
        XCTAssertEqual(count, 400)
    }
}
