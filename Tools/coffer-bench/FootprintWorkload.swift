import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation

/// F1, the footprint workload: what an app pays in memory for one open encrypted database. On a fresh
/// copy of the filled table (100,000 rows, about 18 MB), `readerCount` threads each do
/// `lookupsPerReader` random primary-key lookups, one read call each through a `PreparedQuery` (raw C:
/// one prepared statement per reader connection), while a writer commits `updateCount` one-row updates.
///
/// Reported: lookups/s, and the peak RSS reached above the RSS just before the database was opened, in
/// a child process per repetition (the file is generated and copied before, by the parent). `F1-baseline` is encrypted Coffer as
/// SQLite's own default would size it: 2 MiB of page cache per connection (`PRAGMA cache_size=-2000`)
/// and no decrypted-page cache.
struct FootprintWorkload {
    let reads: ReadWorkloads
    let lookupsPerReader: Int
    static let readerCount = 4
    static let updateCount = 200
    static let updateSQL = "UPDATE person SET score = score + 1 WHERE id = ?"
    static let baselineCacheKiB = 2000

    var harness: Harness { reads.harness }

    func run(_ impl: Implementation) throws -> [Measurement] {
        var results = [
            try measure("F1", impl, cacheKiB: harness.cacheKiB, decryptedPageCacheKiB: DecryptedPageCache.capacityKiB)
        ]
        if impl == .coffer {
            results.append(try measure("F1-baseline", impl, cacheKiB: Self.baselineCacheKiB, decryptedPageCacheKiB: 0))
        }
        return results
    }

    /// Each repetition runs in a child process (this executable, told so by `childVariable`), so that
    /// no earlier workload's freed heap is reused and hides what this one takes.
    private func measure(_ name: String, _ impl: Implementation, cacheKiB: Int, decryptedPageCacheKiB: Int) throws
        -> Measurement
    {
        var seconds: [Double] = []
        var peaks: [Int] = []
        for _ in 0..<harness.repetitions {
            let path = harness.freshPath("f1")
            try FileManager.default.copyItem(atPath: try reads.filledDatabase(impl), toPath: path)
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            child.arguments = []
            child.environment = ProcessInfo.processInfo.environment.merging([
                Self.childVariable:
                    "\(impl.rawValue) \(cacheKiB) \(decryptedPageCacheKiB) \(reads.rowCount) \(lookupsPerReader) \(path)"
            ]) { $1 }
            let output = Pipe()
            child.standardOutput = output
            try child.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            child.waitUntilExit()
            let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
            guard child.terminationStatus == 0, fields.count == 2, let elapsed = Double(fields[0]) else {
                throw BenchError("F1 child failed (status \(child.terminationStatus)): \(String(decoding: data, as: UTF8.self))")
            }
            seconds.append(elapsed)
            if let peak = Int(fields[1]) { peaks.append(peak) }
        }
        let medianSeconds = median(seconds)
        let operations = Double(Self.readerCount * lookupsPerReader)
        return Measurement(
            workload: name, impl: impl.rawValue, opsPerSecond: operations / medianSeconds, seconds: medianSeconds,
            peakRSSKiB: peaks.isEmpty ? nil : peaks.sorted()[peaks.count / 2])
    }

    static let childVariable = "COFFER_BENCH_F1_CHILD"

    /// In a child `measure` started: runs one repetition and prints its seconds and peak RSS increase
    /// in KiB ("-" when unknown). Returns false in any other process.
    static func runAsChild() throws -> Bool {
        guard let spec = ProcessInfo.processInfo.environment[childVariable] else { return false }
        let fields = spec.split(separator: " ", maxSplits: 5).map(String.init)
        guard fields.count == 6, let impl = Implementation(rawValue: fields[0]), let cacheKiB = Int(fields[1]),
            let decryptedKiB = Int(fields[2]), let rowCount = Int(fields[3]), let lookups = Int(fields[4])
        else { throw BenchError("bad \(childVariable): \(spec)") }
        DecryptedPageCache.capacityKiB = decryptedKiB
        var configuration = Configuration(encryption: impl.isEncrypted ? .passphrase(WriteWorkloads.passphrase) : .none)
        configuration.cacheSizeKiB = cacheKiB
        let (elapsed, peak) = try ResidentMemory.peakIncrease {
            try runOnce(
                impl, path: fields[5], configuration: configuration, cacheKiB: cacheKiB, rowCount: rowCount,
                lookupsPerReader: lookups)
        }
        print(elapsed, peak.map(String.init) ?? "-")
        return true
    }

    /// Opens, runs the readers and the writer, closes; returns the wall time of the work.
    private static func runOnce(
        _ impl: Implementation, path: String, configuration: Configuration, cacheKiB: Int, rowCount: Int,
        lookupsPerReader: Int
    ) throws -> Double {
        let database: Database?
        let rawWriter: RawConnection?
        let rawReaders: [RawConnection]
        if impl.isRaw {
            database = nil
            rawWriter = try RawConnection(path: path, key: impl.rawKey, cacheKiB: cacheKiB)
            rawReaders = try (0..<Self.readerCount).map { _ in
                try RawConnection(path: path, key: impl.rawKey, readOnly: true, cacheKiB: cacheKiB)
            }
        } else {
            database = try Database(path: path, configuration: configuration)
            rawWriter = nil
            rawReaders = []
        }
        defer { try? database?.close() }
        let lookups = lookupsPerReader
        let failures = LookupCounts(readers: Self.readerCount)
        let group = DispatchGroup()
        let start = DispatchTime.now().uptimeNanoseconds
        for reader in 0..<Self.readerCount {
            group.enter()
            let raw = rawReaders.indices.contains(reader) ? UncheckedBox(value: rawReaders[reader]) : nil
            Thread {
                failures.finish(
                    reader,
                    Result {
                        try Self.lookUp(reader: reader, count: lookups, rowCount: rowCount, raw: raw?.value, database: database)
                        return ReaderTally(lookups: lookups, cpuSeconds: 0)
                    })
                group.leave()
            }.start()
        }
        try update(rowCount: rowCount, raw: rawWriter, database: database)
        group.wait()
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        if let error = failures.error { throw error }
        return seconds
    }

    private static func lookUp(reader: Int, count: Int, rowCount: Int, raw: RawConnection?, database: Database?) throws {
        var generator = SeededGenerator(seed: UInt64(80 + reader))
        if let raw {
            let statement = try raw.prepare(BenchRow.selectByIDSQL)
            defer { sqlite3_finalize(statement) }
            for _ in 0..<count {
                _ = try RawLookup.row(
                    id: Int64.random(in: 1...Int64(rowCount), using: &generator), statement: statement, connection: raw)
            }
        } else if let database {
            let byID = try CofferLookup.byID.get()
            for _ in 0..<count {
                _ = try CofferLookup.person(
                    id: Int64.random(in: 1...Int64(rowCount), using: &generator), byID: byID, in: database)
            }
        }
    }

    /// `updateCount` one-row updates, each its own transaction.
    private static func update(rowCount: Int, raw: RawConnection?, database: Database?) throws {
        var generator = SeededGenerator(seed: 79)
        let ids = (0..<Self.updateCount).map { _ in Int64.random(in: 1...Int64(rowCount), using: &generator) }
        if let raw {
            let statement = try raw.prepare(Self.updateSQL)
            defer { sqlite3_finalize(statement) }
            for id in ids {
                sqlite3_bind_int64(statement, 1, id)
                try raw.step(statement, expecting: SQLITE_DONE)
                sqlite3_reset(statement)
            }
        } else if let database {
            for id in ids { try database.write { db in try db.execute(sql: Self.updateSQL, arguments: [id]) } }
        }
    }
}

/// Hands a connection to the one thread that uses it.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
}
