import CofferTestSupport
import Foundation
import XCTest

@testable import CofferEngine

/// The reader pool parks a checked-in reader in its thread's slot and hands it back to that thread's next
/// checkout without its lock. These tests run reading threads at once: each keeps its own reader, and many
/// threads still meet the things that must see every reader: waiters when all are busy, drains (a
/// passphrase change closes every reader and reopens them with the new key) and `releaseMemory` (which
/// visits the idle ones).
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

    /// Two threads reading at once each keep the reader they were given, as raw C's reading threads keep
    /// their connections (a reader parked in another thread's slot is taken only when no other is idle).
    func testConcurrentReadingThreadsKeepTheirOwnReaders() throws {
        let dir = try TemporaryDirectory()
        var configuration = Configuration(encryption: .none)
        configuration.readerCount = 2
        let database = try Database(path: dir.path("affinity.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, v INTEGER)")
            for id in 1...100 { try db.execute(sql: "INSERT INTO t(id, v) VALUES (?, ?)", arguments: [id, id]) }
        }
        let reads = 1_000
        let changes = ObservedValues<Int>()
        let failures = ObservedValues<String>()
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for thread in 0..<2 {
            done.enter()
            Thread.detachNewThread {
                defer { done.leave() }
                start.wait()
                var previous: ObjectIdentifier?
                var changed = 0
                for index in 0..<reads {
                    do {
                        let (reader, value) = try database.read { db in
                            (
                                ObjectIdentifier(db),
                                try db.fetchOne(sql: "SELECT v FROM t WHERE id = ?", arguments: [index % 100 + 1])?.decode(
                                    Int.self, at: 0)
                            )
                        }
                        if value != index % 100 + 1 {
                            failures.append("thread \(thread), read \(index): \(String(describing: value))")
                        }
                        if let previous, previous != reader { changed += 1 }
                        previous = reader
                        // Work between reads, with the reader given back: the other thread's next
                        // checkout comes while it is parked.
                        usleep(20)
                    } catch {
                        failures.append("thread \(thread), read \(index): \(error)")
                    }
                }
                changes.append(changed)
            }
        }
        start.signal()
        start.signal()
        XCTAssertEqual(done.wait(timeout: .now() + 120), .success)
        XCTAssertEqual(failures.values, [])
        // Until both threads have a reader of their own, one may take the other's once or twice.
        XCTAssertEqual(changes.values.count, 2)
        for changed in changes.values {
            XCTAssertLessThanOrEqual(changed, 4, "a thread changed readers \(changed) times in \(reads) reads")
        }
        try database.close()
    }
}
