import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class ErrorCorruptionTests: XCTestCase {
    func testConstraintErrorsMatchByFamilyAndCarrySQLNotValues() throws {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE u(email TEXT UNIQUE NOT NULL)") }
        try db.write { try $0.execute(sql: "INSERT INTO u VALUES (?)", arguments: ["a@example.com"]) }
        do {
            try db.write { try $0.execute(sql: "INSERT INTO u VALUES (?)", arguments: ["a@example.com"]) }
            XCTFail("expected a constraint error")
        } catch CofferError.constraint {
            // matched by primary code
        }
        do {
            try db.write { try $0.execute(sql: "INSERT INTO u VALUES (?)", arguments: [nil]) }
            XCTFail("expected a constraint error")
        } catch let error as CofferError {
            XCTAssertEqual(error.code, .constraintNotNull)
            XCTAssertTrue(ResultCode.constraint ~= error)
            XCTAssertFalse(ResultCode.constraintUnique ~= error)
            XCTAssertEqual(error.sql, "INSERT INTO u VALUES (?)")
            XCTAssertFalse(error.description.contains("a@example.com"))
        }
    }

    private final class Events: @unchecked Sendable {
        let lock = NSLock()
        var events: [CorruptionEvent] = []
    }

    func testCorruptionHandlerFiresOnceForADamagedPage() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("damaged.db")
        let created = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        try created.write { db in
            try db.execute(sql: "CREATE TABLE big(x TEXT)")
            for i in 0..<400 {
                try db.execute(sql: "INSERT INTO big VALUES (?)", arguments: [String(repeating: "row \(i) ", count: 20)])
            }
        }
        try created.close()
        // Flip bytes in the middle of page 3 (a table page): its HMAC no longer verifies.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: 2 * 4096 + 1000)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 64))
        try handle.close()

        let events = Events()
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.onCorruption = { event in events.lock.withLock { events.events.append(event) } }
        let db = try Database(path: path, configuration: configuration)
        for _ in 0..<3 {
            XCTAssertThrowsError(try db.read { try $0.fetchAll(sql: "SELECT x FROM big") }) { error in
                XCTAssertTrue((error as? CofferError)?.isCorruption == true, "\(error)")
            }
        }
        // SQLCipher 4 fails every later read of a connection that met the page (as "out of memory"): the reader
        // is replaced, and what is intact still reads.
        for _ in 0..<3 {
            XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master") }, 1)
        }
        XCTAssertEqual(events.lock.withLock { events.events.count }, 1)
        XCTAssertEqual(events.lock.withLock { events.events.first?.sql }, "SELECT x FROM big")
        XCTAssertEqual(events.lock.withLock { events.events.first?.path }, path)
    }
}
