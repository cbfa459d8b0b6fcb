import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Commits made by another process (the `sqlcipher` 3.4.1 shell) reach observations through the
/// `PRAGMA data_version` poll.
final class ObservationProcessTests: XCTestCase {
    func testAnotherProcessesCommitsRefetchEveryObservation() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shared.db")
        var configuration = Configuration(encryption: .passphrase("observed by two"))
        configuration.externalChangeLatency = 0.05
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            try db.executeScript("CREATE TABLE a(id INTEGER PRIMARY KEY, v TEXT); CREATE TABLE b(id INTEGER PRIMARY KEY)")
        }
        let changes = CollectedChanges(database.changes(in: ["b"]))
        let counts = ObservedValues<Int>()
        let handle = database.observe(
            on: DispatchQueue(label: "observation-process"), { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM a") ?? 0 },
            onChange: { counts.append($0) })
        XCTAssertTrue(counts.wait { values, _ in values == [0] })

        let key = try ShellRawKey.spec(passphrase: "observed by two", path: path)
        try Shell.run(
            "sqlcipher", path,
            """
            PRAGMA key = "\(key)";
            PRAGMA cipher_page_size = \(database.configuration.cipher.pageSize);
            INSERT INTO a(v) VALUES ('from the shell'), ('and another');
            """)
        XCTAssertTrue(counts.wait { values, _ in values == [0, 2] }, "\(counts.values)")
        // Regions are unknown for another process's commits: the change stream reports the whole database.
        let received = changes.wait(for: 1)
        XCTAssertEqual(received.first?.isExternal, true)
        XCTAssertEqual(received.first?.isWholeDatabase, true)
        withExtendedLifetime(handle) {}
    }
}
