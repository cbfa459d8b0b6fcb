import ArgumentParser
import CSQLCipher
import Coffer
import Foundation

/// `coffer-bench`: every workload on raw SQLCipher C calls and on Coffer, each encrypted and plaintext, in
/// one process, on fresh files; prints ops/s and the Coffer/raw C ratios (medians of several runs).
struct CofferBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "coffer-bench",
        abstract: "Benchmark Coffer against the raw SQLCipher C API in the same run.")

    @Flag(help: "One JSON object per line instead of a table.")
    var json = false

    @Flag(help: "Smaller counts: the whole run takes under a minute.")
    var quick = false

    @Option(
        parsing: .upToNextOption,
        help:
            "Run only these workloads (W0 W1 W1-sql W2 W3 W4 W4b W4b-read W5 W6 W7 W8 W9 W10 W11 W12 W13 W14 W15 F1 S1; W9-commits… alone too). S1 runs only when named."
    )
    var only: [String] = []

    @Option(parsing: .upToNextOption, help: "Run only these implementations (raw-c raw-c-plain coffer coffer-plain).")
    var impl: [String] = []

    @Option(help: "Rows in the table (W1, W3–W6, W15; default 100,000, 10,000 with --quick).")
    var rows: Int?

    @Option(help: "The size axis: N × 100,000 rows in the table (W1, W3–W6, S1); --rows wins when both are given.")
    var scale: Int?

    @Option(help: "One-row transactions in W2 (default 2,000, 500 with --quick).")
    var transactions: Int?

    @Option(help: "W13: rows per live-migration batch (default: LiveMigrationOptions's).")
    var migrationBatch: Int?
    @Option(help: "W13: seconds a queued app call may wait for a migration batch (default: LiveMigrationOptions's).")
    var migrationAppWait: Double?
    @Option(help: "W13: seconds between the paced app's operation pairs (default 0.005: 200 commits and lookups a second).")
    var migrationAppInterval: Double = 0.005

    @Option(help: "Repetitions per figure (the median is reported).")
    var repetitions: Int = 3

    @Option(help: "Page cache per connection in KiB, for every implementation (default: Coffer's default).")
    var cacheKib: Int = Configuration().cacheSizeKiB

    @Option(help: "Coffer's decrypted-page cache in KiB; 0 turns it off (default: Coffer's default).")
    var decryptedPageCacheKib: Int = DecryptedPageCache.capacityKiB

    @Option(help: "Coffer's key derivation for its files: coffer (PBKDF2-HMAC-SHA512 256000) or sqlcipher3 (SHA1 64000).")
    var keyDerivation: String = "coffer"

    @Option(
        help:
            "Coffer's monitoring: off, metrics (counters and timers to swift-prometheus) or statements (every statement traced).")
    var monitoring: String = "off"

    @Option(help: "SQLite's memory statistics for the whole process: on (SQLite's default) or off.")
    var sqliteMemoryStatistics: String = "on"

    @Option(
        help:
            "Raw C writers' PRAGMA wal_autocheckpoint in W1, W2 and W6, in pages: 0 (default) never checkpoints, so raw C's WAL grows without bound; 1000 is SQLite's default, a bounded WAL as Coffer keeps."
    )
    var rawWalAutocheckpoint: Int = 0

    mutating func run() throws {
        switch sqliteMemoryStatistics {
        case "on": break
        case "off":
            guard coffer_sqlite3_config_memstatus(0) == SQLITE_OK else { throw BenchError("SQLite was already initialized") }
        default: throw ValidationError("--sqlite-memory-statistics must be on or off")
        }
        if try FootprintWorkload.runAsChild() { return }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "coffer-bench-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        DecryptedPageCache.capacityKiB = decryptedPageCacheKib
        var harness = Harness(repetitions: quick ? 1 : max(1, repetitions), directory: directory, cacheKiB: cacheKib)
        switch keyDerivation {
        case "coffer": harness.keyDerivation = .coffer
        case "sqlcipher3": harness.keyDerivation = .sqlcipher3
        default: throw ValidationError("--key-derivation must be coffer or sqlcipher3")
        }
        harness.monitoring = try MonitoringLevel.monitoring(named: monitoring)
        guard rawWalAutocheckpoint >= 0 else { throw ValidationError("--raw-wal-autocheckpoint must be 0 or more") }
        harness.rawAutoCheckpointPages = rawWalAutocheckpoint
        let rows = BenchRow.generate(self.rows ?? scale.map { max(1, $0) * 100_000 } ?? (quick ? 10_000 : 100_000))
        let writes = WriteWorkloads(harness: harness, rows: rows, transactionCount: transactions ?? (quick ? 500 : 2_000))
        let reads = ReadWorkloads(
            harness: harness, writes: writes, lookupCount: quick ? 10_000 : 100_000,
            perCallLookupCount: quick ? 5_000 : 20_000, rangeQueryCount: quick ? 100 : 1_000)
        let concurrent = ConcurrentWorkloads(reads: reads, writerRows: quick ? 5_000 : 20_000)
        let keyValue = KeyValueWorkloads(harness: harness, count: quick ? 10_000 : 100_000)
        let documents = DocumentWorkloads(
            harness: harness, count: quick ? 10_000 : 100_000, searches: quick ? 200 : 1_000, aggregates: quick ? 5 : 20)
        let compression = CompressionWorkloads(harness: harness, count: quick ? 20_000 : 100_000)
        let observation = ObservationWorkloads(
            writes: writes, latencyCommits: quick ? 50 : 200, burstCommits: quick ? 2_000 : 10_000)
        let fullText = FullTextWorkloads(harness: harness, count: quick ? 20_000 : 200_000, queries: quick ? 200 : 1_000)
        let pinyin = PinyinWorkloads(harness: harness, count: quick ? 10_000 : 100_000, queries: quick ? 200 : 1_000)
        let recordCache = RecordCacheWorkloads(harness: harness, lookups: quick ? 20_000 : 1_000_000)
        let footprint = FootprintWorkload(reads: reads, lookupsPerReader: quick ? 2_500 : 25_000)
        let control = ControlWorkloads(reads: reads, rounds: quick ? 20 : 100)
        var migrationOptions = LiveMigrationOptions()
        if let migrationBatch { migrationOptions.batchSize = migrationBatch }
        if let migrationAppWait { migrationOptions.maximumAppWait = migrationAppWait }
        let liveMigration = LiveMigrationWorkloads(
            harness: harness, rows: quick ? 20_000 : 200_000, options: migrationOptions, appInterval: migrationAppInterval)
        let checksums = ChecksumLog()
        let associations = AssociationWorkloads(
            harness: harness, authors: 1_000, booksPerAuthor: 20, pages: quick ? 50 : 1_000, lookups: quick ? 1_000 : 50_000,
            checksums: checksums)
        let migrationStep = MigrationStepWorkloads(harness: harness, rows: rows.count, checksums: checksums)
        var results: [Measurement] = []
        func wants(_ workload: String) -> Bool { only.isEmpty || only.contains(workload) }
        // Each workload's figures carry the peak RSS it added (F1 measures its own, from just before opening).
        func record(_ run: @autoclosure () throws -> [Measurement]) rethrows {
            let (measurements, peakKiB) = try ResidentMemory.peakIncrease(run)
            for var measurement in measurements {
                if measurement.peakRSSKiB == nil { measurement.peakRSSKiB = peakKiB }
                results.append(measurement)
                if json { Report.printJSON(measurement) }
            }
        }
        for impl in Implementation.allCases where self.impl.isEmpty || self.impl.contains(impl.rawValue) {
            if wants("W0") {
                try record(writes.openCosts(impl))
                if impl == .coffer { OpenReference.report(repetitions: harness.repetitions) }
            }
            if wants("W1") { try record([writes.bulkInsert(impl)]) }
            if wants("W1-sql") { try record([writes.bulkInsertSQL(impl)]) }
            if wants("W2") { try record([writes.singleRowTransactions(impl)]) }
            if wants("W3") { try record([reads.fetchAll(impl, checksums: checksums)]) }
            if wants("W4") { try record([reads.lookupsInOneRead(impl, checksums: checksums)]) }
            if wants("W4b") { try record([reads.lookupsPerRead(impl, inReadClosure: false, checksums: checksums)]) }
            if wants("W4b-read") { try record([reads.lookupsPerRead(impl, inReadClosure: true, checksums: checksums)]) }
            if wants("W5") { try record([reads.rangeQueries(impl, checksums: checksums)]) }
            if wants("W6") { try record(concurrent.run(impl)) }
            if wants("W7") { try record(keyValue.run(impl)) }
            if wants("W11") { try record(documents.run(impl)) }
            if wants("W12") { try record(compression.run(impl)) }
            let observationParts = only.filter { $0.hasPrefix("W9-") }
            if wants("W9") || !observationParts.isEmpty { try record(observation.run(impl, only: observationParts)) }
            if wants("W8") { try record(fullText.run(impl)) }
            if wants("W8") || wants("W8-pinyin") { try record(pinyin.run(impl)) }
            if wants("W10") {
                try record(associations.run(impl))
                try record(recordCache.run(impl))
            }
            if wants("W13") { try record(liveMigration.run(impl)) }
            if wants("W14") { try record(control.run(impl)) }
            if wants("W15") { try record(migrationStep.run(impl)) }
            if wants("F1") { try record(footprint.run(impl)) }
            if only.contains("S1") { try record(ScaleWorkloads(harness: harness, writes: writes).run(impl)) }
        }
        // With --json the ratio table goes to standard error, so one run gives both.
        if json {
            FileHandle.standardError.write(Data((Report.table(results) + "\n").utf8))
        } else {
            print(Report.table(results))
        }
        guard checksums.mismatches.isEmpty else {
            throw BenchError("implementations read different rows:\n" + checksums.mismatches.joined(separator: "\n"))
        }
    }
}

CofferBench.main()
