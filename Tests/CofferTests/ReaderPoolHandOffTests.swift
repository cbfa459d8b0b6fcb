import CofferTestSupport
import Foundation
import XCTest

@testable import CofferEngine

/// The reader pool hands the last checked-in reader to the next checkout without its lock. These tests
/// run many reading threads against the things that must still see every reader: waiters when all are
/// busy, drains (a passphrase change closes every reader and reopens them with the new key) and
/// `releaseMemory` (which visits the idle ones).
final class ReaderPoolHandOffTests: XCTestCase {
    func testReadsAcrossDrainsAndWaitersNeverHangOrFail() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration(encryption: .passphrase("one"))
        configuration.readerCount = 2  // six threads: most checkouts find every reader busy and wait
        let database = try Database(path: dir.path("pool.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
            for id in 1...100 { try db.execute(sql: "INSERT INTO t(id, v) VALUES (?, ?)", arguments: [id, id * 3]) }
        }
        let threads = 6
        let reads = 1_500
        let failures = ObservedValues<String>()
        let done = DispatchGroup()
        for thread in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                for index in 0..<reads {
                    let id = (thread * 31 + index) % 100 + 1
                    do {
                        let value = try database.read { db in
                            try db.fetchOne(sql: "SELECT v FROM t WHERE id = ?", arguments: [id])?.decode(Int.self, at: 0)
                        }
                        if value != id * 3 { failures.append("id \(id): \(value.map(String.init) ?? "nil")") }
                    } catch {
                        failures.append("id \(id): \(error)")
                    }
                }
            }
        }
        // Meanwhile: drains (each passphrase change closes the readers and reopens them under the new
        // key) and visits of the idle readers.
        for round in 0..<4 {
            try database.changePassphrase(to: .passphrase(round % 2 == 0 ? "two" : "one"))
            database.releaseMemory()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 120), .success, "a reader was lost: some read never returned")
        XCTAssertEqual(failures.values, [])
        try database.close()
    }
}
