import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Kills a process in the middle of its batches and checks that every batch survived whole or not at all,
/// with the index in step.
///
/// The writer is this test binary itself, re-run on ``testHelperWritesBatchesUntilKilled`` with the
/// database path in the environment; it prints a line after each commit, and the parent reads those
/// lines (no sleeping) before sending SIGKILL.
final class KeyValueCrashTests: XCTestCase {
    private static let pathVariable = "COFFER_KV_CRASH_PATH"
    private static let batchSize = 50

    private static func openStore(_ path: String) throws -> KeyValueStore {
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("crash")))
        return try KeyValueStore(database: database, name: "crash", configuration: .init(indexes: [Post.likes]))
    }

    /// The child's side: a no-op unless the parent set the environment variable.
    func testHelperWritesBatchesUntilKilled() throws {
        guard let path = ProcessInfo.processInfo.environment[Self.pathVariable] else { return }
        let store = try Self.openStore(path)
        for generation in 0..<100_000 {
            try store.batch { batch in
                for index in 0..<Self.batchSize {
                    let post = Post(id: "\(generation)-\(index)", publishedAt: Date(), likes: generation, author: "w")
                    try batch.put(post, for: post.id, metadata: String(repeating: "m", count: 200))
                }
            }
            FileHandle.standardOutput.write(Data("committed \(generation)\n".utf8))
        }
    }

    func testAKilledWriterLeavesWholeBatchesAndAConsistentIndex() throws {
        #if os(Linux)
        let directory = try TemporaryDirectory("coffer-kv-crash")
        let path = directory.path("crash.db")
        let end = try ChildKill.run(
            executable: CommandLine.arguments[0],
            arguments: ["CofferKeyValueTests.KeyValueCrashTests/testHelperWritesBatchesUntilKilled"],
            environment: [Self.pathVariable: path]
        ) { $0 == "committed 5" }  // a child that ends early is not killed: the checks below say why
        XCTAssertTrue(end.killed, "the writer was killed, not finished")

        let store = try Self.openStore(path)
        let integrity = try store.database.read { try $0.fetchValue(String.self, sql: "PRAGMA integrity_check") }
        XCTAssertEqual(integrity, "ok")
        let perGeneration = try store.database.read { db in
            try db.fetchAll(
                sql: """
                    SELECT f.value, count(*) FROM "kv:crash" AS i JOIN "kv-index:crash" AS f ON f.item_id = i.id
                    GROUP BY f.value
                    """
            ).map { (try $0.decode(Int.self, at: 0), try $0.decode(Int.self, at: 1)) }
        }
        XCTAssertGreaterThanOrEqual(perGeneration.count, 6, "every reported commit is durable")
        print("crash test: killed after \(perGeneration.count) whole batches")
        for (generation, count) in perGeneration {
            XCTAssertEqual(count, Self.batchSize, "batch \(generation) is whole")
        }
        XCTAssertEqual(try store.totalCount(), perGeneration.count * Self.batchSize, "no item without its index row")
        try store.put("still writable", for: "after")
        XCTAssertEqual(try store.value(String.self, for: "after"), "still writable")
        #else
        throw XCTSkip("re-runs the test binary directly, which only the Linux XCTest runner allows")
        #endif
    }
}
