import Coffer
import Dispatch
import Foundation

/// W9: the cost of change observation (Coffer only; raw C and plaintext have no counterpart).
///
/// - `W9-commits`: W2's one-row commits, nothing observed.
/// - `W9-commits-unrelated`: the same with 100 observations of another table (ratio to `W9-commits`:
///   the per-commit cost of the hooks and of matching regions).
/// - `W9-commits-related`: the same with 100 observations of the written table (each commit re-fetches,
///   coalesced).
/// - `W9-commits-kv-cache`: the same with nothing observed but a key-value store with a decoded-object
///   cache open (what its cache invalidation costs each commit: table names only, no timer).
/// - `W9-latency-p50`, `W9-latency-p99`: with 100 observations of the written table and default options,
///   from the end of the committing transaction to each observation's callback receiving the new value (`seconds` is the
///   latency); commits are spaced 25 ms apart so each is measured alone.
/// - `W9-burst-fetches-max`: 10,000 commits back to back with 100 observations of the written table;
///   `ops_per_s` is the most fetches any observation ran (the bound coalescing gives), `seconds` the burst.
///
/// `--only W9-commits W9-commits-unrelated` runs just those (for callgrind: the latency and burst parts
/// are long under it); `W9-latency` selects both percentiles.
struct ObservationWorkloads {
    let writes: WriteWorkloads
    var harness: Harness { writes.harness }
    let observationCount = 100
    let latencyCommits: Int
    let burstCommits: Int

    /// Runs the workloads named in `only` (W9-… names; all of them when empty).
    func run(_ impl: Implementation, only: [String] = []) throws -> [Measurement] {
        guard impl == .coffer else { return [] }
        func wants(_ name: String) -> Bool { only.isEmpty || only.contains(name) }
        var results: [Measurement] = []
        let variants: [(String, String?, Bool)] = [
            ("W9-commits", nil, false), ("W9-commits-unrelated", "other", false), ("W9-commits-related", "person", false),
            ("W9-commits-kv-cache", nil, true),
        ]
        for (name, observed, withStore) in variants where wants(name) {
            let seconds = try harness.median(setUp: {
                // Timing starts once every observation delivered its first value: the 100 initial fetches
                // (and the narrowing of each observation to the tables it read) are not per-commit cost.
                let tracker = DeliveryTracker(observations: observationCount)
                let state = try prepare(observing: observed) { index, count in tracker.delivered(index, count) }
                if observed != nil { tracker.waitAll(count: 0) }
                if withStore { state.store = try KeyValueStore(database: state.database, name: "w9") }
                return state
            }) { state in
                try commit(state.database, rows: writes.transactionCount)
            } tearDown: { state in
                try state.close()
            }
            results.append(
                Measurement(
                    workload: name, impl: impl.rawValue, opsPerSecond: Double(writes.transactionCount) / seconds, seconds: seconds
                ))
        }
        if wants("W9-latency") || wants("W9-latency-p50") || wants("W9-latency-p99") {
            let latencies = try measureLatencies()
            for (name, fraction) in [("W9-latency-p50", 0.5), ("W9-latency-p99", 0.99)] {
                let latency = latencies[min(latencies.count - 1, Int(Double(latencies.count) * fraction))]
                results.append(Measurement(workload: name, impl: impl.rawValue, opsPerSecond: 1 / latency, seconds: latency))
            }
        }
        guard wants("W9-burst-fetches-max") else { return results }
        let (maxFetches, meanFetches, seconds) = try measureBurst()
        FileHandle.standardError.write(
            Data(
                "W9 burst: \(burstCommits) commits in \(String(format: "%.2f", seconds)) s, fetches per observation max \(maxFetches), mean \(String(format: "%.1f", meanFetches))\n"
                    .utf8))
        results.append(
            Measurement(workload: "W9-burst-fetches-max", impl: impl.rawValue, opsPerSecond: Double(maxFetches), seconds: seconds)
        )
        return results
    }

    /// A fresh database with `person` and `other`, and 100 observations of `observed` (none when nil).
    final class State {
        let database: Database
        var handles: [ObservationHandle] = []
        var store: KeyValueStore?
        init(database: Database) { self.database = database }
        func close() throws {
            handles.forEach { $0.cancel() }
            store = nil
            try database.close()
        }
    }

    private func prepare(
        observing table: String?, options: ObservationOptions = ObservationOptions(),
        onChange: (@Sendable (Int, Int) -> Void)? = nil, onFetch: (@Sendable (Int) -> Void)? = nil
    ) throws -> State {
        let database = try Database(path: harness.freshPath("w9"), configuration: writes.configuration(.coffer))
        try database.write { db in
            try db.executeScript(BenchRow.schema)
            try db.executeScript("CREATE TABLE other(id INTEGER PRIMARY KEY, v INTEGER)")
        }
        let state = State(database: database)
        guard let table else { return state }
        let queue = DispatchQueue(label: "w9-delivery")
        for index in 0..<observationCount {
            // Different SQL per observation, as in an app with many screens.
            let sql = "SELECT count(*) + \(index) FROM \(table)"
            state.handles.append(
                database.observe(
                    options: options, on: queue,
                    { db in
                        onFetch?(index)
                        return try db.fetchValue(Int.self, sql: sql) ?? 0
                    }, onChange: { value in onChange?(index, value - index) }))
        }
        return state
    }

    private func commit(_ database: Database, rows: Int, from first: Int = 0) throws {
        for row in writes.rows[first..<(first + rows)] {
            try database.write { db in try db.execute(sql: BenchRow.insertSQL, arguments: row.arguments) }
        }
    }

    private func measureLatencies() throws -> [Double] {
        let tracker = DeliveryTracker(observations: observationCount)
        let state = try prepare(observing: "person") { index, count in tracker.delivered(index, count) }
        defer { try? state.close() }
        tracker.waitAll(count: 0)
        var latencies: [Double] = []
        for number in 1...latencyCommits {
            Thread.sleep(forTimeInterval: 0.025)
            // Stamped at the end of the transaction, just before its COMMIT: the value can reach its
            // callback before `write` returns to this thread.
            let row = writes.rows[number - 1]
            let committed = try state.database.write { db in
                try db.execute(sql: BenchRow.insertSQL, arguments: row.arguments)
                return DispatchTime.now().uptimeNanoseconds
            }
            latencies += tracker.waitAll(count: number).map { Double($0 - min($0, committed)) / 1e9 }
        }
        return latencies.sorted()
    }

    private func measureBurst() throws -> (Int, Double, Double) {
        let fetches = FetchCounter(observations: observationCount)
        let tracker = DeliveryTracker(observations: observationCount)
        let state = try prepare(observing: "person", onChange: { index, count in tracker.delivered(index, count) }) {
            fetches.count($0)
        }
        defer { try? state.close() }
        tracker.waitAll(count: 0)
        let initial = fetches.counts
        let start = DispatchTime.now().uptimeNanoseconds
        try commit(state.database, rows: burstCommits)
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        tracker.waitAll(count: burstCommits)
        let during = zip(fetches.counts, initial).map { $0 - $1 }
        return (during.max() ?? 0, Double(during.reduce(0, +)) / Double(during.count), seconds)
    }
}

/// When each observation last received which count.
final class DeliveryTracker: @unchecked Sendable {
    private let condition = NSCondition()
    private var counts: [Int]
    private var times: [UInt64]

    init(observations: Int) {
        counts = Array(repeating: -1, count: observations)
        times = Array(repeating: 0, count: observations)
    }

    func delivered(_ index: Int, _ count: Int) {
        condition.withLock {
            counts[index] = count
            times[index] = DispatchTime.now().uptimeNanoseconds
            condition.broadcast()
        }
    }

    /// Waits until every observation received `count`; returns when each did.
    @discardableResult
    func waitAll(count: Int) -> [UInt64] {
        condition.withLock {
            while counts.contains(where: { $0 < count }) { condition.wait() }
            return times
        }
    }
}

/// Fetches run per observation.
final class FetchCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var values: [Int]
    init(observations: Int) { values = Array(repeating: 0, count: observations) }
    func count(_ index: Int) { lock.withLock { values[index] += 1 } }
    var counts: [Int] { lock.withLock { values } }
}
