import Foundation
import GRDB
import GRDBSQLite

// grdb-bench [--json] [--quick] [--only W1 W3 … W8 W9 W10 W15] [--repetitions N] [--cache-kib N]
var json = false
var quick = false
var only: [String] = []
var repetitions = 3
var cacheKiB = 8192
var arguments = CommandLine.arguments.dropFirst()
while let argument = arguments.popFirst() {
    switch argument {
    case "--json": json = true
    case "--quick": quick = true
    case "--repetitions": repetitions = arguments.popFirst().flatMap { Int($0) } ?? repetitions
    case "--cache-kib": cacheKiB = arguments.popFirst().flatMap { Int($0) } ?? cacheKiB
    case "--only":
        while let next = arguments.first, !next.hasPrefix("--") {
            only.append(next)
            arguments.removeFirst()
        }
    default:
        FileHandle.standardError.write(Data("unknown argument \(argument)\n".utf8))
        exit(2)
    }
}

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("grdb-bench-\(UUID().uuidString.prefix(8))")
try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(at: directory) }
let harness = Harness(repetitions: quick ? 1 : max(1, repetitions), directory: directory, cacheKiB: cacheKiB)
let rowCount = quick ? 10_000 : 100_000
let rows = BenchRow.generate(rowCount)
let transactionCount = quick ? 500 : 2_000
let lookupIDs = BenchRow.lookupIDs(count: quick ? 10_000 : 100_000, rowCount: rowCount, seed: 4)
let perCallIDs = BenchRow.lookupIDs(count: quick ? 5_000 : 20_000, rowCount: rowCount, seed: 5)
let rangeCount = quick ? 100 : 1_000
let writerRows = quick ? 5_000 : 20_000
let raw = RawWorkloads(rows: rows, cacheKiB: cacheKiB)
let grdb = GRDBWorkloads(rows: rows + BenchRow.generate(rowCount + writerRows).suffix(writerRows), cacheKiB: cacheKiB)
var results: [Measurement] = []
var checksums: [String: Int64] = [:]

@MainActor func wants(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
@MainActor func record(_ workload: String, _ impl: Implementation, operations: Int, seconds: Double) {
    let measurement = Measurement(
        workload: workload, impl: impl.rawValue, opsPerSecond: Double(operations) / seconds, seconds: seconds)
    results.append(measurement)
    if json { Report.printJSON(measurement) }
}
@MainActor func check(_ workload: String, _ sum: Int64) throws {
    if let expected = checksums[workload], expected != sum {
        throw BenchError("\(workload): implementations read different rows")
    }
    checksums[workload] = sum
}

@MainActor func record(_ output: FeatureRuns.Output) throws {
    for measurement in output.measurements {
        results.append(measurement)
        if json { Report.printJSON(measurement) }
    }
    for (workload, sum) in output.sums.sorted(by: { $0.key < $1.key }) { try check(workload, sum) }
}

// W8–W10's inputs, shared by both implementations: the messages and queries, the W10 file.
let sizes = FeatureSizes(quick: quick)
let features = FeatureRuns(harness: harness, sizes: sizes, grdb: GRDBFeatureWorkloads(base: grdb, sizes: sizes))
var chatGenerator = ChatGenerator(seed: 0x5EED_0008)
let messages = wants("W8") ? (0..<sizes.messages).map { _ in chatGenerator.message() } : []
// FTS4 match texts (raw patterns, which raw C binds as they are). The Chinese and ranked sets are drawn,
// so the generator's sequence stays coffer-bench's, but not run: SQLite's built-in tokenizers do not
// segment Chinese and FTS4 has no built-in rank (coffer-bench uses Coffer's tokenizer and BM25 function).
var queryKinds = QueryKinds<String>(
    messages: messages, count: wants("W8") ? sizes.queries : 0, generator: &chatGenerator,
    render: .init(term: { $0 }, phrase: { "\"\($0)\"" }, prefix: { $0 + "*" }))
queryKinds.all.removeAll { !["W8-term", "W8-phrase", "W8-prefix"].contains($0.0) }
let shelf = harness.freshPath("w10")
if wants("W10") {
    let pool = try grdb.openPool(shelf)
    try features.grdb.fillShelf(pool)
    try pool.close()
}
// W15's filled file (untimed), copied for each repetition of both implementations.
let people = harness.freshPath("w15-filled")
if wants("W15") { try RawFeatureWorkloads.fillPeople(people, rows: rowCount, cacheKiB: cacheKiB) }

// One filled file, shared by the read workloads of both implementations.
let filled = harness.freshPath("fill")
try raw.insert(path: filled, count: rowCount, perTransaction: rowCount)

for impl in Implementation.allCases {
    if wants("W1") || wants("W2") {
        for (name, count, per) in [("W1", rowCount, rowCount), ("W2", transactionCount, 1)] where wants(name) {
            let seconds = try harness.median(setUp: { harness.freshPath(name) }) { path in
                switch impl {
                case .rawC: try raw.insert(path: path, count: count, perTransaction: per)
                case .grdb: try grdb.insert(path: path, count: count, perTransaction: per)
                }
            }
            record(name, impl, operations: count, seconds: seconds)
        }
    }
    let reads: [(String, Int, (RawConnection) throws -> Int64, (DatabasePool) throws -> Int64)] = [
        ("W3", rowCount, { try raw.fetchAll($0) }, { try grdb.fetchAll($0) }),
        (
            "W4", lookupIDs.count, { try raw.lookups(lookupIDs, oneTransaction: true, $0) },
            { try grdb.lookupsInOneRead(lookupIDs, $0) }
        ),
        (
            "W4b", perCallIDs.count, { try raw.lookups(perCallIDs, oneTransaction: false, $0) },
            { try grdb.lookupsPerRead(perCallIDs, $0) }
        ),
        ("W5", rangeCount, { try raw.ranges(rangeCount, $0) }, { try grdb.ranges(rangeCount, $0) }),
    ]
    for (name, operations, rawBody, grdbBody) in reads where wants(name) {
        let seconds: Double
        switch impl {
        case .rawC:
            seconds = try harness.median(setUp: { try RawConnection(path: filled, cacheKiB: cacheKiB) }) {
                try check(name, try rawBody($0))
            }
        case .grdb:
            seconds = try harness.median(
                setUp: { () -> DatabasePool in
                    let pool = try grdb.openPool(filled)
                    try pool.read { _ in }
                    return pool
                }, { try check(name, try grdbBody($0)) }, tearDown: { try $0.close() })
        }
        record(name, impl, operations: operations, seconds: seconds)
    }
    if wants("W6") {
        var writer: [Double] = []
        var together: [Double] = []
        var alone: [Double] = []
        let newRows = grdb.rows[rowCount..<(rowCount + writerRows)]
        for _ in 0..<harness.repetitions {
            let path = harness.freshPath("w6")
            try FileManager.default.copyItem(atPath: filled, toPath: path)
            let lookUp: @Sendable (Int, StopFlag) throws -> Int
            let insert: () throws -> Void
            var keep: [AnyObject] = []
            let lookupRange = 1...Int64(rowCount)
            switch impl {
            case .rawC:
                let writerConnection = try RawConnection(path: path, cacheKiB: cacheKiB)
                let readers = try (0..<2).map { _ in try RawConnection(path: path, cacheKiB: cacheKiB) }
                keep = [writerConnection] + readers
                lookUp = { reader, stop in
                    let connection = readers[reader]
                    let statement = try connection.prepare(BenchRow.selectByIDSQL)
                    defer { _ = sqlite3_finalize(statement) }
                    var generator = SeededGenerator(seed: UInt64(60 + reader))
                    var count = 0
                    while !stop.isSet {
                        sqlite3_bind_int64(statement, 1, Int64.random(in: lookupRange, using: &generator))
                        try connection.step(statement, expecting: SQLITE_ROW)
                        _ = BenchRow(statement: statement)
                        sqlite3_reset(statement)
                        count += 1
                    }
                    return count
                }
                insert = { try raw.insert(newRows, perTransaction: 100, connection: writerConnection) }
            case .grdb:
                let pool = try grdb.openPool(path)
                try pool.read { _ in try pool.unsafeReentrantRead { _ in } }
                keep = [pool]
                lookUp = { reader, stop in
                    var generator = SeededGenerator(seed: UInt64(60 + reader))
                    var count = 0
                    while !stop.isSet {
                        _ = try GRDBWorkloads.lookup(Int64.random(in: lookupRange, using: &generator), pool)
                        count += 1
                    }
                    return count
                }
                insert = { try grdb.insert(newRows, perTransaction: 100, pool: pool) }
            }
            let (seconds, lookups) = try readWhile(readers: 2, lookUp: lookUp, insert)
            writer.append(Double(writerRows) / seconds)
            together.append(Double(lookups) / seconds)
            let (aloneSeconds, aloneLookups) = try readWhile(readers: 2, lookUp: lookUp) {
                Thread.sleep(forTimeInterval: seconds)
            }
            alone.append(Double(aloneLookups) / aloneSeconds)
            withExtendedLifetime(keep) {}
        }
        for (name, values) in [("W6-writer", writer), ("W6-readers", together), ("W6-readers-alone", alone)] {
            let median = values.sorted()[values.count / 2]
            record(name, impl, operations: 1, seconds: 1 / median)
        }
    }
}
for impl in Implementation.allCases {
    if wants("W8") { try record(features.fullText(impl, messages, queryKinds)) }
    if wants("W9") { try record(features.observation(impl, rows[0..<transactionCount])) }
    if wants("W10") { try record(features.associations(impl, shelf)) }
    if wants("W15") { try record(features.migration(impl, filled: people, rows: rowCount)) }
}
if !json { print(Report.table(results)) }
