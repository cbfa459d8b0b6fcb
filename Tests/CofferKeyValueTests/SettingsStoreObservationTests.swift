import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Changes made around a settings store — raw SQL on its database, another `Database` on the file,
/// another process — reach its observers through the database's change observation.
final class SettingsStoreObservationTests: XCTestCase {
    /// Collects changes and fulfils `expectation` when `count` have arrived.
    private final class Waiter: @unchecked Sendable {
        private let lock = NSLock()
        private var changes: [SettingsChange] = []
        private var wanted: (count: Int, expectation: XCTestExpectation)?

        func append(_ change: SettingsChange) {
            lock.withLock {
                changes.append(change)
                if let wanted, changes.count == wanted.count { wanted.expectation.fulfill() }
            }
        }

        func expect(_ count: Int, _ expectation: XCTestExpectation) {
            lock.withLock {
                if changes.count >= count { expectation.fulfill() } else { wanted = (count, expectation) }
            }
        }

        var values: [SettingsChange] { lock.withLock { changes } }
    }

    private func wait(for waiter: Waiter, count: Int) {
        let arrived = expectation(description: "\(count) changes")
        waiter.expect(count, arrived)
        wait(for: [arrived], timeout: 20)
    }

    func testRawSQLCommitsAreToldOnceAndOwnWritesAreNotRepeated() throws {
        let database = try Database.temporary()
        let settings = try SettingsStore(database: database)
        try settings.set(.dark, for: .theme)  // before anyone observes: part of the starting snapshot
        let waiter = Waiter()
        let observation = settings.onChange { waiter.append($0) }
        try settings.set(2, for: .launchCount)
        try database.write { db in
            try db.execute(
                sql:
                    "INSERT INTO \"settings:standard\"(key, value) SELECT 'copy', value FROM \"settings:standard\" WHERE key = 'theme'"
            )
        }
        wait(for: waiter, count: 2)
        try database.write { db in try db.execute(sql: "DELETE FROM \"settings:standard\" WHERE key IN ('theme', 'launchCount')")
        }
        wait(for: waiter, count: 4)
        try settings.set(3, for: .launchCount)
        try database.write { db in try db.execute(sql: "DELETE FROM \"settings:standard\" WHERE key = 'copy'") }
        wait(for: waiter, count: 6)
        XCTAssertEqual(
            waiter.values,
            [
                SettingsChange(name: "launchCount", newValue: 2), SettingsChange(name: "copy", newValue: "dark"),
                SettingsChange(name: "launchCount", newValue: nil), SettingsChange(name: "theme", newValue: nil),
                SettingsChange(name: "launchCount", newValue: 3), SettingsChange(name: "copy", newValue: nil),
            ])
        XCTAssertEqual(try settings[.theme], .light)
        observation.cancel()
    }

    func testAnotherDatabaseOnTheFileIsTold() async throws {
        let fixture = try EncryptedFixture()
        var configuration = EncryptedFixture.configuration
        configuration.externalChangeLatency = 0.02
        let observed = try SettingsStore(database: try Database(path: fixture.path, configuration: configuration))
        let other = try SettingsStore(database: fixture.database)
        var changes = observed.changes().makeAsyncIterator()
        try other.set(.dark, for: .theme)
        let change = await changes.next()
        XCTAssertEqual(change, SettingsChange(name: "theme", newValue: "dark"))
        XCTAssertEqual(try observed[.theme], .dark)
    }

    func testAnotherProcessIsTold() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("settings.db")
        var configuration = Coffer.Configuration(encryption: .passphrase("settings observed"))
        configuration.externalChangeLatency = 0.02
        let database = try Database(path: path, configuration: configuration)
        let settings = try SettingsStore(database: database)
        var changes = settings.changes().makeAsyncIterator()
        let key = try ShellRawKey.spec(passphrase: "settings observed", path: path)
        // The stored form of the string "dark": format version 1, string tag 6, length 4, the bytes.
        try Shell.run(
            "sqlcipher", path,
            """
            PRAGMA key = "\(key)";
            PRAGMA cipher_page_size = \(database.configuration.cipher.pageSize);
            INSERT INTO "settings:standard"(key, value) VALUES ('theme', X'0106046461726B');
            """)
        let change = await changes.next()
        XCTAssertEqual(change, SettingsChange(name: "theme", newValue: "dark"))
        XCTAssertEqual(try settings[.theme], .dark)
    }
}
