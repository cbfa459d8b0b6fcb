import Foundation

// The harness, rows and report of `coffer-bench`, repeated here because this package cannot depend on
// Coffer's (see Package.swift). Keep the row model and the workloads identical to coffer-bench's.

struct Measurement: Encodable {
    let workload: String
    let impl: String
    let opsPerSecond: Double
    let seconds: Double
    /// Median and 99th-percentile latency of one operation, for workloads that time each (W8).
    var p50Seconds: Double?
    var p99Seconds: Double?

    enum CodingKeys: String, CodingKey {
        case workload, impl
        case opsPerSecond = "ops_per_s"
        case seconds
        case p50Seconds = "p50_s"
        case p99Seconds = "p99_s"
    }

    /// ops/s from the total time of single timings; their p50 and p99 (per-operation latency).
    static func perOperation(_ workload: String, _ impl: Implementation, _ times: [Double], operations: Int = 1) -> Measurement {
        let total = times.reduce(0, +)
        let sorted = times.sorted()
        var measurement = Measurement(
            workload: workload, impl: impl.rawValue, opsPerSecond: Double(operations * times.count) / total, seconds: total)
        if times.count > 1 {
            measurement.p50Seconds = sorted[sorted.count / 2]
            measurement.p99Seconds = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        }
        return measurement
    }
}

enum Implementation: String, CaseIterable {
    case rawC = "raw-c"
    case grdb = "grdb"
}

struct Harness {
    let repetitions: Int
    let directory: URL
    let cacheKiB: Int

    func freshPath(_ name: String) -> String {
        directory.appendingPathComponent("\(name)-\(UUID().uuidString.prefix(8)).db").path
    }

    func median<State>(setUp: () throws -> State, _ body: (State) throws -> Void, tearDown: (State) throws -> Void = { _ in })
        rethrows -> Double
    {
        var times: [Double] = []
        for _ in 0..<repetitions {
            let state = try setUp()
            let start = DispatchTime.now().uptimeNanoseconds
            try body(state)
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            try tearDown(state)
        }
        return times.sorted()[times.count / 2]
    }
}

struct BenchRow {
    let id: Int64
    let name: String
    let age: Int64
    let email: String
    let score: Double
    let payload: Data

    static let schema = """
        CREATE TABLE person(id INTEGER PRIMARY KEY, name TEXT, age INTEGER, email TEXT, score REAL, payload BLOB);
        CREATE INDEX person_age ON person(age);
        """
    static let insertSQL = "INSERT INTO person(id, name, age, email, score, payload) VALUES (?, ?, ?, ?, ?, ?)"
    static let selectAllSQL = "SELECT id, name, age, email, score, payload FROM person"
    static let selectByIDSQL = "SELECT id, name, age, email, score, payload FROM person WHERE id = ?"
    static let rangeSQL =
        "SELECT id, name, age, email, score, payload FROM person WHERE age BETWEEN ? AND ? ORDER BY score LIMIT 50"

    static func make(_ id: Int64) -> BenchRow {
        let payloadByte = UInt8(truncatingIfNeeded: id)
        return BenchRow(
            id: id,
            name: "name-\(String(format: "%011lld", id))",
            age: 18 + id % 60,
            email: "user\(String(format: "%09lld", id))@example.com",
            score: Double(id % 1000) / 10,
            payload: Data(repeating: payloadByte, count: 100))
    }

    static func generate(_ count: Int) -> [BenchRow] { (1...Int64(max(count, 1))).map(make) }

    static func lookupIDs(count: Int, rowCount: Int, seed: UInt64) -> [Int64] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Int64.random(in: 1...Int64(rowCount), using: &generator) }
    }

    static func ageRange(_ index: Int) -> (Int64, Int64) {
        let low = Int64(18 + (index * 7) % 60)
        return (low, low)
    }
}

struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct Checksum {
    private(set) var value: Int64 = 0
    mutating func add(id: Int64, age: Int64, score: Double, name: String, email: String, payload: Data) {
        value &+= id &+ age &+ Int64(score * 10) &+ Int64(name.utf8.count) &+ Int64(email.utf8.count)
        value &+= Int64(payload.count) &+ Int64(payload.first ?? 0)
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var value = 0
    private(set) var error: (any Error)?
    var total: Int { lock.withLock { value } }
    func add(_ result: Result<Int, any Error>) {
        lock.withLock {
            switch result {
            case .success(let count): value += count
            case .failure(let failure): error = failure
            }
        }
    }
}

/// Runs `body` on this thread while `readers` threads run `lookUp(reader, stop)`; returns body's time and
/// the readers' total count.
func readWhile(readers: Int, lookUp: @escaping @Sendable (Int, StopFlag) throws -> Int, _ body: () throws -> Void) throws -> (
    Double, Int
) {
    let stop = StopFlag()
    let group = DispatchGroup()
    let counter = Counter()
    for reader in 0..<readers {
        group.enter()
        Thread {
            counter.add(Result { try lookUp(reader, stop) })
            group.leave()
        }.start()
    }
    let start = DispatchTime.now().uptimeNanoseconds
    var failure: (any Error)?
    do { try body() } catch { failure = error }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    stop.set()
    group.wait()
    if let failure { throw failure }
    if let error = counter.error { throw error }
    return (seconds, counter.total)
}

enum Report {
    static func printJSON(_ measurement: Measurement) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        if let data = try? encoder.encode(measurement) { print(String(decoding: data, as: UTF8.self)) }
    }

    static func table(_ results: [Measurement]) -> String {
        var workloads: [String] = []
        for result in results where !workloads.contains(result.workload) { workloads.append(result.workload) }
        var lines = ["workload              raw-c ops/s       grdb ops/s     grdb/raw-c"]
        for workload in workloads {
            func ops(_ impl: Implementation) -> Double? {
                results.first { $0.workload == workload && $0.impl == impl.rawValue }?.opsPerSecond
            }
            let raw = ops(.rawC)
            let grdb = ops(.grdb)
            let ratio = raw.flatMap { raw in grdb.map { raw / $0 } }
            lines.append(
                workload.padding(toLength: 20, withPad: " ", startingAt: 0)
                    + format(raw, 14) + format(grdb, 17) + format(ratio, 15, decimals: 2))
        }
        return lines.joined(separator: "\n")
    }

    private static func format(_ value: Double?, _ width: Int, decimals: Int = 0) -> String {
        let text = value.map { String(format: "%.\(decimals)f", $0) } ?? "—"
        return String(repeating: " ", count: max(0, width - text.count)) + text
    }
}
