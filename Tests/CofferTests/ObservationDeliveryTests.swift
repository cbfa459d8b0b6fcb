import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// How values are delivered: on the main queue by default, bursts coalesced into a bounded number of
/// fetches, and sequences that end when the database closes.
final class ObservationDeliveryTests: XCTestCase {
    private func makeDatabase() throws -> Database {
        var configuration = Configuration()
        configuration.externalChangeLatency = 0
        let database = try Database.temporary(configuration: configuration)
        try database.write { try $0.execute(sql: "CREATE TABLE a(id INTEGER PRIMARY KEY, v INTEGER)") }
        return database
    }

    func testCallbacksRunOnTheMainQueueByDefault() throws {
        let database = try makeDatabase()
        let delivered = expectation(description: "first value on the main thread")
        let handle = database.observe({ try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM a") ?? -1 }) { value in
            XCTAssertTrue(Thread.isMainThread)
            XCTAssertEqual(value, 0)
            delivered.fulfill()
        }
        wait(for: [delivered], timeout: 10)
        withExtendedLifetime(handle) {}
    }

    func testCallbacksRunOnTheChosenQueue() throws {
        let database = try makeDatabase()
        let queue = DispatchQueue(label: "observation-chosen")
        let key = DispatchSpecificKey<Int>()
        queue.setSpecific(key: key, value: 22)
        let observed = ObservedValues<Int?>()
        let handle = database.observe(on: queue, { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM a") ?? -1 }) { _ in
            observed.append(DispatchQueue.getSpecific(key: key))
        }
        XCTAssertTrue(observed.wait { values, _ in values.count == 1 })
        try database.write { try $0.execute(sql: "INSERT INTO a(v) VALUES (1)") }
        XCTAssertTrue(observed.wait { values, _ in values == [22, 22] }, "the first value and the next on the chosen queue")
        withExtendedLifetime(handle) {}
    }

    func testABurstOfCommitsCostsABoundedNumberOfFetches() throws {
        let database = try makeDatabase()
        let interval = 0.05
        let observed = ObservedValues<Int>()
        let handle = database.observe(
            options: ObservationOptions(coalescingInterval: interval), on: DispatchQueue(label: "observation-burst"),
            { db in
                observed.noteFetch()
                return try db.fetchValue(Int.self, sql: "SELECT count(*) FROM a") ?? -1
            }, onChange: { observed.append($0) })
        XCTAssertTrue(observed.wait { values, _ in values == [0] })
        let commits = 400
        let start = Date()
        for id in 1...commits { try database.write { try $0.execute(sql: "INSERT INTO a(id) VALUES (?)", arguments: [id]) } }
        XCTAssertTrue(observed.wait { values, _ in values.last == commits }, "the last value is the last commit's")
        // One fetch per interval at most, plus the first and the one after the burst.
        let bound = Int(Date().timeIntervalSince(start) / interval) + 3
        XCTAssertLessThanOrEqual(observed.fetchCount, bound, "\(commits) commits")
        XCTAssertLessThan(observed.fetchCount, commits / 4)
        withExtendedLifetime(handle) {}
    }

    func testSequencesEndWhenTheDatabaseCloses() async throws {
        let database = try makeDatabase()
        var values = database.observe { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM a") ?? -1 }.makeAsyncIterator()
        var changes = database.changes(in: ["a"]).makeAsyncIterator()
        let first = try await values.next()
        XCTAssertEqual(first, 0)
        try await database.write { try $0.execute(sql: "INSERT INTO a(id) VALUES (1)") }
        let change = await changes.next()
        XCTAssertEqual(change?.rows.map(\.rowID), [1])
        try database.close()
        var rest: [Int] = []
        do {
            while let value = try await values.next() { rest.append(value) }
        } catch let error as CofferError where error.code == .apiMisuse {
            // The fetch of the last commit was running when the database closed.
        }
        XCTAssertTrue(rest.allSatisfy { $0 == 1 }, "\(rest)")
        let after = await changes.next()
        XCTAssertNil(after, "the change stream ended")
    }
}
