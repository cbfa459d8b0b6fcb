import Coffer
import CofferTestSupport
import Foundation
import XCTest

enum Theme: String, Codable, Sendable { case light, dark }

extension SettingsKey where Value == Theme {
    static var theme: SettingsKey<Theme> { SettingsKey("theme", default: .light) }
}

extension SettingsKey where Value == Int {
    static var launchCount: SettingsKey<Int> { SettingsKey("launchCount", default: 0) }
}

final class SettingsStoreTests: XCTestCase {
    private func storedRowCount(_ database: Database) throws -> Int? {
        try database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM \"settings:standard\"") }
    }

    func testTypedKeysDefaultsAndRemoval() throws {
        let fixture = try EncryptedFixture()
        let settings = try SettingsStore(database: fixture.database)
        XCTAssertEqual(try settings[.theme], .light)
        settings.register(defaults: ["theme": "dark", "fontSize": 13])
        XCTAssertEqual(try settings[.theme], .dark, "a registered default beats the key's own")
        XCTAssertEqual(try settings.value(Int.self, forName: "fontSize"), 13)
        XCTAssertEqual(try storedRowCount(fixture.database), 0, "defaults are never written")

        try settings.set(.light, for: .theme)
        try settings.set(3, for: .launchCount)
        XCTAssertEqual(try settings[.theme], .light)
        XCTAssertEqual(try settings[.launchCount], 3)
        XCTAssertEqual(
            try settings.dictionaryRepresentation(), ["theme": "light", "fontSize": 13, "launchCount": 3])

        try settings.remove(.theme)
        XCTAssertEqual(try settings[.theme], .dark, "back to the registered default")
        XCTAssertEqual(try storedRowCount(fixture.database), 1)

        // Stored values survive a reopen; registered defaults are per instance, as in NSUserDefaults.
        let reopened = try SettingsStore(database: try fixture.reopen())
        XCTAssertEqual(try reopened[.launchCount], 3)
        XCTAssertEqual(try reopened[.theme], .light)
        XCTAssertThrowsError(try reopened.value(String.self, forName: "launchCount")) { error in
            XCTAssertEqual((error as? DocumentError)?.reason, .decodingFailed)
        }
        try reopened.removeAll()
        XCTAssertEqual(try reopened[.launchCount], 0)
    }

    func testChangesAreDeliveredInOrderToStreamsAndCallbacks() async throws {
        let settings = try SettingsStore(database: try Database.temporary(), name: "prefs")
        let stream = settings.changes()
        let seen = Collected()
        let observation = settings.onChange { seen.append($0) }
        try settings.set(.dark, for: .theme)
        try settings.remove(.theme)
        try settings.remove(.theme)  // nothing stored: no change
        try settings.set(1, for: .launchCount)
        let expected = [
            SettingsChange(name: "theme", newValue: "dark"), SettingsChange(name: "theme", newValue: nil),
            SettingsChange(name: "launchCount", newValue: 1),
        ]
        XCTAssertEqual(seen.values, expected)
        var streamed: [SettingsChange] = []
        for await change in stream {
            streamed.append(change)
            if streamed.count == 3 { break }
        }
        XCTAssertEqual(streamed, expected)
        observation.cancel()
        try settings.set(2, for: .launchCount)
        XCTAssertEqual(seen.values.count, 3, "a cancelled observation is not called")
    }

    /// Eight threads write and read at once: every write lands, every read sees a whole value, and the
    /// observer sees each thread's writes in that thread's order.
    func testSettingsAreSafeFromSeveralThreads() throws {
        let settings = try SettingsStore(database: try Database.temporary())
        let seen = Collected()
        let observation = settings.onChange { seen.append($0) }
        let failures = Collected()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            do {
                for step in 0..<25 {
                    try settings.set(step, forName: "t\(thread)")
                    let read = try settings.value(Int.self, forName: "t\(thread)")
                    if read != step {
                        failures.append(SettingsChange(name: "t\(thread)", newValue: read.map { .int(Int64($0)) }))
                    }
                    _ = try settings[.theme]
                }
            } catch {
                failures.append(SettingsChange(name: "\(error)", newValue: nil))
            }
        }
        XCTAssertEqual(failures.values, [])
        let dictionary = try settings.dictionaryRepresentation()
        for thread in 0..<8 {
            XCTAssertEqual(dictionary["t\(thread)"], 24)
            let mine = seen.values.filter { $0.name == "t\(thread)" }.compactMap { $0.newValue?.intValue }
            XCTAssertEqual(mine, (0..<25).map { Int64($0) })
        }
        observation.cancel()
    }

    func testSettingsAreEncryptedOnDisk() throws {
        let fixture = try EncryptedFixture()
        let settings = try SettingsStore(database: fixture.database)
        try settings.set("SETTING-MARKER-91c2", forName: "token")
        try fixture.database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        for file in [fixture.path, fixture.path + "-wal"] {
            guard let bytes = FileManager.default.contents(atPath: file) else { continue }
            XCTAssertNil(bytes.range(of: Data("91c2".utf8)), file)
        }
    }
}

/// Values appended from any thread.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [SettingsChange] = []
    func append(_ change: SettingsChange) { lock.withLock { stored.append(change) } }
    var values: [SettingsChange] { lock.withLock { stored } }
}
