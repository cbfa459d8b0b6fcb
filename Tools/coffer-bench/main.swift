import ArgumentParser
import Foundation

/// `coffer-bench`: every workload on raw SQLCipher C calls, Coffer encrypted and Coffer plaintext, in
/// one process, on fresh files; prints ops/s and the coffer/raw-c ratio (medians of several runs).
struct CofferBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-bench",
        abstract: "Benchmark Coffer against the raw SQLCipher C API in the same run.")

    @Flag(help: "One JSON object per line instead of a table.")
    var json = false

    @Flag(help: "Smaller counts: the whole run takes under a minute.")
    var quick = false

    @Option(parsing: .upToNextOption, help: "Run only these workloads (W0 W1 W2…).")
    var only: [String] = []

    @Option(help: "Repetitions per figure (the median is reported).")
    var repetitions: Int = 3

    mutating func run() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let harness = Harness(repetitions: quick ? 1 : max(1, repetitions), directory: directory)
        let rows = BenchRow.generate(quick ? 10_000 : 100_000)
        let writes = WriteWorkloads(harness: harness, rows: rows, transactionCount: quick ? 500 : 2_000)
        var results: [Measurement] = []
        func wants(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
        func record(_ measurements: [Measurement]) {
            for measurement in measurements {
                results.append(measurement)
                if json { Report.printJSON(measurement) }
            }
        }
        for impl in Implementation.allCases {
            if wants("W0") { record(try writes.openCosts(impl)) }
            if wants("W1") { record([try writes.bulkInsert(impl)]) }
            if wants("W2") { record([try writes.singleRowTransactions(impl)]) }
        }
        if !json { print(Report.table(results)) }
    }
}

CofferBench.main()
