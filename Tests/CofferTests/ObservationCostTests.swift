import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Observation costs nothing once nobody observes: the writer's hooks are gone at its next use.
final class ObservationCostTests: XCTestCase {
    /// Whether a commit hook is installed on the writer (asked by replacing it, on a database about to close).
    private func writerHasCommitHook(_ database: Database) throws -> Bool {
        try database.writeWithoutTransaction { db in sqlite3_commit_hook(db.handle, nil, nil) != nil }
    }

    func testHooksGoWhenTheLastObservationEnds() throws {
        let database = try Database.temporary()
        try database.write { try $0.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY)") }
        let observed = ObservedValues<Int>()
        let handle = database.observe(
            on: DispatchQueue(label: "observation-cost"), { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM a") ?? -1 },
            onChange: { observed.append($0) })
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        try database.write { try $0.execute(sql: "INSERT INTO a(id) VALUES (1)") }
        XCTAssertTrue(observed.wait { values, _ in values == [0, 1] })
        handle.cancel()
        XCTAssertFalse(try writerHasCommitHook(database), "removed at the writer's first use after the last one left")
    }

    func testAKeyValueStoreWithoutCacheInstallsNothing() throws {
        let database = try Database.temporary()
        var configuration = KeyValueStore.Configuration()
        configuration.cacheCostLimit = 0
        let store = try KeyValueStore(database: database, name: "uncached", configuration: configuration)
        try store.put("value", for: "key")
        XCTAssertFalse(try writerHasCommitHook(database))
    }
}
