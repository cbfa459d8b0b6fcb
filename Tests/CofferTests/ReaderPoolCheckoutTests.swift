import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// The reader pool's lock-free checkout (atomic idle slots): more threads than readers, a writer
/// committing meanwhile, and a close while reads run. A reader is never held by two threads at once,
/// every read sees one snapshot that includes every commit finished before it began, and nothing hangs.
final class ReaderPoolCheckoutTests: XCTestCase {
    /// What the threads share: readers in use, the last commit the writer finished, failures.
    private final class Board: @unchecked Sendable {
        private let lock = NSCondition()
        private var inUse: Set<ObjectIdentifier> = []
        private var seen: Set<ObjectIdentifier> = []
        private var published = 0
        private var reads = 0
        private(set) var failures: [String] = []
        var readCount: Int { lock.withLock { reads } }

        func enter(_ connection: Connection) {
            lock.withLock {
                let id = ObjectIdentifier(connection)
                if !inUse.insert(id).inserted { failures.append("one reader checked out by two threads") }
                seen.insert(id)
            }
        }

        func leave(_ connection: Connection) { _ = lock.withLock { inUse.remove(ObjectIdentifier(connection)) } }
        var readersSeen: Int { lock.withLock { seen.count } }
        func fail(_ message: String) { lock.withLock { failures.append(message) } }
        func publish(_ commits: Int) { lock.withLock { published = commits } }
        var lastPublished: Int { lock.withLock { published } }

        func countRead() {
            lock.withLock {
                reads += 1
                lock.broadcast()
            }
        }

        /// Waits until `count` reads completed in all.
        func waitForReads(_ count: Int) { lock.withLock { while reads < count { lock.wait() } } }
    }

    private func makeDatabase(_ dir: TemporaryDirectory, readers: Int) throws -> Database {
        var configuration = Configuration()
        configuration.readerCount = readers
        let database = try Database(path: dir.path("pool.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE counter(n INTEGER NOT NULL)")
            try db.execute(sql: "INSERT INTO counter VALUES (0)")
            try db.execute(sql: "CREATE TABLE log(n INTEGER PRIMARY KEY)")
        }
        return database
    }

    /// Eight threads share three readers while the writer commits: no reader is handed to two threads,
    /// each read's two statements see the same commit, and that commit is at least the last one whose
    /// `write` returned before the read began.
    func testEightThreadsShareThreeReadersWhileWriterCommits() throws {
        let dir = try TemporaryDirectory()
        let database = try makeDatabase(dir, readers: 3)
        defer { try? database.close() }
        let board = Board()
        let group = DispatchGroup()
        let commits = 2_000
        for _ in 0..<8 {
            DispatchQueue.global().async(group: group) {
                while board.lastPublished < commits {
                    let floor = board.lastPublished
                    do {
                        let (n, logged) = try database.read { db in
                            board.enter(db)
                            defer { board.leave(db) }
                            let n = try db.fetchValue(Int.self, sql: "SELECT n FROM counter") ?? -1
                            let logged = try db.fetchValue(Int.self, sql: "SELECT count(*) FROM log") ?? -1
                            return (n, logged)
                        }
                        if n != logged { board.fail("one read saw counter \(n) and \(logged) log rows") }
                        if n < floor { board.fail("read began after commit \(floor) finished but saw \(n)") }
                        board.countRead()
                    } catch {
                        board.fail("read: \(error)")
                    }
                }
            }
        }
        for commit in 1...commits {
            try database.write { db in
                try db.execute(sql: "UPDATE counter SET n = n + 1")
                try db.execute(sql: "INSERT INTO log VALUES (?)", arguments: [commit])
            }
            board.publish(commit)
        }
        group.wait()
        XCTAssertEqual(board.failures, [])
        XCTAssertLessThanOrEqual(board.readersSeen, 3, "the pool opens at most readerCount readers")
        XCTAssertGreaterThan(board.readCount, 100)
        let final = try database.read { try $0.fetchValue(Int.self, sql: "SELECT n FROM counter") }
        XCTAssertEqual(final, commits)
    }

    /// `close` while four threads read in a loop on two readers: it waits for the reads under way, every
    /// later read fails with "the database is closed", and no thread hangs.
    func testCloseWhileThreadsReadEndsEveryLoop() throws {
        let dir = try TemporaryDirectory()
        let database = try makeDatabase(dir, readers: 2)
        let board = Board()
        let group = DispatchGroup()
        let endings = Board()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                while true {
                    do {
                        _ = try database.read { db in
                            board.enter(db)
                            defer { board.leave(db) }
                            return try db.fetchValue(Int.self, sql: "SELECT count(*) FROM log")
                        }
                        board.countRead()
                    } catch let error as CofferError where error.code == .apiMisuse {
                        endings.countRead()
                        return
                    } catch {
                        board.fail("read: \(error)")
                        return
                    }
                }
            }
        }
        board.waitForReads(200)
        try database.close()
        endings.waitForReads(4)
        group.wait()
        XCTAssertEqual(board.failures, [])
        XCTAssertLessThanOrEqual(board.readersSeen, 2)
    }
}
