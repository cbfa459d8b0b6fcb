import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// A seeded writer inserting, updating (one column or another, or a row's id) and deleting across tables,
/// with rolled-back transactions and savepoints, a rekey and checkpoints, while dozens of observations
/// run — whole-table aggregates, single columns, primary-key lookups by constant and by parameter, so
/// precise regions (columns, rowids) are exercised. After the run, for every
/// observation: each value delivered equals the database at some commit, values never go back in time,
/// duplicates are skipped when asked, and the last value is the state after the last commit; and the
/// change sets are exactly the committed rows, in commit order.
final class ObservationRandomizedTests: XCTestCase {
    struct RolledBack: Error {}

    private static let tables = ["t0", "t1", "t2", "t3"]

    func testSeededWriterWithManyObservations() throws {
        for seed: UInt64 in [0x0B5E_55ED, 22, 2026] { try run(seed: seed, transactions: 300, observations: 32) }
    }

    private func queries(_ random: inout SeededGenerator, count: Int) -> [(sql: String, arguments: StatementArguments)] {
        (0..<count).map { _ in
            let table = Self.tables[random.next(upTo: Self.tables.count)]
            let other = Self.tables[random.next(upTo: Self.tables.count)]
            let id = 1 + random.next(upTo: 60)
            switch random.next(upTo: 7) {
            case 0: return ("SELECT count(*) FROM \(table)", [])
            case 1: return ("SELECT coalesce(sum(v), 0) FROM \(table)", [])
            case 2: return ("SELECT count(*) FROM \(table) JOIN \(other) USING (id)", [])
            case 3: return ("SELECT coalesce(max(v), -1) FROM \(table) WHERE id % 3 = 0", [])
            case 4: return ("SELECT coalesce(sum(w), 0) FROM \(table)", [])
            case 5: return ("SELECT coalesce((SELECT v FROM \(table) WHERE id = ?), -1)", [id])
            default: return ("SELECT coalesce((SELECT w FROM \(table) WHERE id = \(id)), -1)", [])
            }
        }
    }

    private func run(seed: UInt64, transactions: Int, observations: Int) throws {
        var random = SeededGenerator(seed: seed)
        let database = try Database.temporary()
        try database.write { db in
            for table in Self.tables {
                try db.execute(sql: "CREATE TABLE \(table)(id INTEGER PRIMARY KEY, v INTEGER, w INTEGER)")
            }
        }
        let sqls = queries(&random, count: observations)
        func evaluate(_ db: Connection) throws -> [Int] {
            try sqls.map { try db.fetchValue(Int.self, sql: $0.sql, arguments: $0.arguments) ?? 0 }
        }
        var history = [try database.read(evaluate)]
        let changes = CollectedChanges(database.changes())
        let queues = (0..<3).map { DispatchQueue(label: "observation-random-\($0)") }
        var observed: [(ObservedValues<Int>, ObservationOptions, ObservationHandle)] = []
        for (index, (sql, arguments)) in sqls.enumerated() {
            let values = ObservedValues<Int>()
            let options = ObservationOptions(
                removesDuplicates: random.next(upTo: 2) == 0, coalescingInterval: random.next(upTo: 2) == 0 ? 0 : 0.005)
            let handle = database.observe(
                options: options, on: queues[index % queues.count],
                { try $0.fetchValue(Int.self, sql: sql, arguments: arguments) ?? 0 },
                onChange: { values.append($0) })
            observed.append((values, options, handle))
        }
        var rows: [String: Set<Int64>] = [:]
        var nextID: Int64 = 1
        var expectedChanges: [[String]] = []
        for number in 0..<transactions {
            if number == transactions / 2 { try database.changePassphrase(to: .rawKey(Data(repeating: 9, count: 32))) }
            if number % 40 == 39 { try database.checkpoint(number % 80 == 79 ? .truncate : .passive) }
            var model = rows
            var next = nextID
            var changed: [String] = []
            let rollback = random.next(upTo: 7) == 0
            func operations(_ db: Connection, count: Int, into log: inout [String]) throws {
                for _ in 0..<count {
                    let table = Self.tables[random.next(upTo: Self.tables.count)]
                    let existing = model[table, default: []]
                    let value = random.next(upTo: 100)
                    if let id = existing.randomElement(using: &random), random.next(upTo: 3) > 0 {
                        let choice = random.next(upTo: 9)
                        if choice < 4 {
                            let column = choice < 2 ? "v" : "w"
                            try db.execute(sql: "UPDATE \(table) SET \(column) = ? WHERE id = ?", arguments: [value, id])
                            log.append("\(table) \(id) update")
                        } else if choice == 4 {
                            // A row changes id: SQLite reports the update under the new rowid only.
                            try db.execute(sql: "UPDATE \(table) SET id = ? WHERE id = ?", arguments: [next, id])
                            model[table]?.remove(id)
                            model[table, default: []].insert(next)
                            log.append("\(table) \(next) update")
                            next += 1
                        } else {
                            try db.execute(sql: "DELETE FROM \(table) WHERE id = ?", arguments: [id])
                            model[table]?.remove(id)
                            log.append("\(table) \(id) delete")
                        }
                    } else {
                        try db.execute(
                            sql: "INSERT INTO \(table)(id, v, w) VALUES (?, ?, ?)", arguments: [next, value, 100 - value])
                        model[table, default: []].insert(next)
                        log.append("\(table) \(next) insert")
                        next += 1
                    }
                }
            }
            let result = Result {
                try database.write { db -> [Int] in
                    try operations(db, count: 1 + random.next(upTo: 4), into: &changed)
                    if random.next(upTo: 4) == 0 {
                        let saved = (model, next)
                        var discarded: [String] = []
                        try? db.savepoint {
                            try operations(db, count: 1 + random.next(upTo: 3), into: &discarded)
                            throw RolledBack()
                        }
                        (model, next) = saved
                    }
                    if rollback { throw RolledBack() }
                    return try evaluate(db)
                }
            }
            if case .success(let state) = result {
                history.append(state)
                rows = model
                nextID = next
                expectedChanges.append(changed)
            }
        }
        let final = history[history.count - 1]
        for (index, (values, options, handle)) in observed.enumerated() {
            XCTAssertTrue(values.wait(timeout: 20) { seen, _ in seen.last == final[index] }, "seed \(seed) \(sqls[index].sql)")
            handle.cancel()
            let seen = values.values
            var commit = 0
            for value in seen {
                while commit < history.count && history[commit][index] != value { commit += 1 }
                XCTAssertLessThan(
                    commit, history.count, "seed \(seed): \(sqls[index].sql) delivered \(seen), not in commit order")
            }
            if options.removesDuplicates {
                XCTAssertFalse(zip(seen, seen.dropFirst()).contains { $0 == $1 }, "seed \(seed): duplicates in \(seen)")
            }
        }
        let received = changes.wait(for: expectedChanges.count, timeout: 20)
        let receivedRows = received.map { $0.rows.map { "\($0.table) \($0.rowID) \($0.kind)" } }
        if let first = zip(receivedRows, expectedChanges).enumerated().first(where: { $1.0 != $1.1 })?.offset {
            XCTFail("seed \(seed): commit \(first) published \(receivedRows[first]), committed \(expectedChanges[first])")
        }
        XCTAssertEqual(receivedRows.count, expectedChanges.count, "seed \(seed)")
        XCTAssertEqual(received.map(\.sequence), (0..<expectedChanges.count).map { UInt64($0 + 1) }, "seed \(seed)")
        try database.close()
    }
}
