import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation

/// W6: one writer inserts `writerRows` rows in transactions of 100 into a copy of the filled table while
/// two readers do one-lookup reads (as in W4b) for the same wall time; then the same two readers run
/// alone for that time again. Reported: writer rows/s (`W6-writer`), reader lookups/s with the writer
/// (`W6-readers`) and without (`W6-readers-alone`).
///
/// Before both, the readers run alone, untimed, for `warmUpSeconds`: both timed phases then start
/// with warm caches. Without it the phase with the writer, which comes first, would also pay for
/// filling Coffer's decrypted-page cache, which the phase without the writer finds full.
///
/// On a 2-core machine the writer and the two readers are three busy threads: read throughput with the
/// writer running is bounded by CPU share as well as by each commit discarding the readers' page caches.
struct ConcurrentWorkloads {
    let reads: ReadWorkloads
    let writerRows: Int
    static let rowsPerTransaction = 100
    static let readerCount = 2
    static let warmUpSeconds = 1.0

    var harness: Harness { reads.harness }

    func run(_ impl: Implementation) throws -> [Measurement] {
        var writer: [Double] = []
        var together: [Double] = []
        var alone: [Double] = []
        for _ in 0..<harness.repetitions {
            let path = harness.freshPath("w6")
            try FileManager.default.copyItem(atPath: try reads.filledDatabase(impl), toPath: path)
            let session = try Session(impl: impl, path: path, harness: harness)
            defer { session.close() }
            let firstID = Int64(reads.rowCount + 1)
            let rows = (0..<Int64(writerRows)).map { BenchRow.make(firstID + $0) }
            _ = try session.readWhile { Thread.sleep(forTimeInterval: ConcurrentWorkloads.warmUpSeconds) }
            let countsBefore = DecryptedPageCache.counts
            let withWriter = try session.readWhile { try session.insert(rows) }
            let (writerSeconds, lookups, misses) = (withWriter.seconds, withWriter.lookups, withWriter.cacheMisses)
            let countsAfter = DecryptedPageCache.counts
            let decryptions = (hits: countsAfter.hits - countsBefore.hits, misses: countsAfter.misses - countsBefore.misses)
            writer.append(Double(rows.count) / writerSeconds)
            together.append(Double(lookups) / writerSeconds)
            let readersAlone = try session.readWhile { Thread.sleep(forTimeInterval: writerSeconds) }
            let (aloneSeconds, aloneLookups, aloneMisses) = (readersAlone.seconds, readersAlone.lookups, readersAlone.cacheMisses)
            alone.append(Double(aloneLookups) / aloneSeconds)
            // Why readers slow down: each page-cache miss is a page read and decrypted again, unless the
            // decrypted-page cache has it.
            FileHandle.standardError.write(
                Data(
                    String(
                        format:
                            "W6 %@: page-cache misses per lookup: %.2f with the writer (%d commits), %.2f alone; %d of %d decryptions with the writer served by the decrypted-page cache\n",
                        impl.rawValue, Double(misses) / Double(max(lookups, 1)),
                        rows.count / ConcurrentWorkloads.rowsPerTransaction,
                        Double(aloneMisses) / Double(max(aloneLookups, 1)),
                        decryptions.hits, decryptions.hits + decryptions.misses
                    ).utf8))
            // What bounds "readers keep": the CPU time the readers were given per wall second (two cores,
            // three busy threads with the writer) times what each CPU second bought (page-cache refills).
            FileHandle.standardError.write(
                Data(
                    String(
                        format:
                            "W6 %@: readers' CPU per wall second %.2f with the writer (writer %.2f), %.2f alone; lookups per reader CPU second %.0f with the writer, %.0f alone\n",
                        impl.rawValue, withWriter.readersCPU / writerSeconds, withWriter.bodyCPU / writerSeconds,
                        readersAlone.readersCPU / aloneSeconds,
                        Double(lookups) / max(withWriter.readersCPU, 1e-9),
                        Double(aloneLookups) / max(readersAlone.readersCPU, 1e-9)
                    ).utf8))
        }
        func measurement(_ name: String, _ values: [Double]) -> Measurement {
            let rate = median(values)
            return Measurement(workload: name, impl: impl.rawValue, opsPerSecond: rate, seconds: 1 / rate)
        }
        return [measurement("W6-writer", writer), measurement("W6-readers", together), measurement("W6-readers-alone", alone)]
    }

    /// One implementation's connections for a W6 run: a writer and `readerCount` readers.
    final class Session: @unchecked Sendable {
        let impl: Implementation
        let rowCount: Int
        private let database: Database?
        private let rawWriter: RawConnection?
        private let rawReaders: [RawConnection]

        init(impl: Implementation, path: String, harness: Harness) throws {
            self.impl = impl
            // Lookups go to the rows that existed before the writer started.
            self.rowCount = try Self.existingRows(path: path, impl: impl, harness: harness)
            switch impl {
            case .rawC, .rawCPlain:
                database = nil
                rawWriter = try RawConnection(
                    path: path, key: impl.rawKey, cacheKiB: harness.cacheKiB,
                    autoCheckpointPages: harness.rawAutoCheckpointPages)
                rawReaders = try (0..<ConcurrentWorkloads.readerCount).map { _ in
                    try RawConnection(path: path, key: impl.rawKey, readOnly: true, cacheKiB: harness.cacheKiB)
                }
            case .coffer, .cofferPlain:
                let database = try Database(path: path, configuration: harness.configuration(impl))
                // Open both readers before timing starts.
                try database.read { _ in try database.read { _ in } }
                self.database = database
                rawWriter = nil
                rawReaders = []
            }
        }

        private static func existingRows(path: String, impl: Implementation, harness: Harness) throws -> Int {
            let database = try Database(
                path: path, configuration: harness.configuration(impl.isEncrypted ? .coffer : .cofferPlain))
            defer { try? database.close() }
            return try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM person") } ?? 0
        }

        func close() { try? database?.close() }

        /// Inserts `rows` in transactions of 100.
        func insert(_ rows: [BenchRow]) throws {
            let size = ConcurrentWorkloads.rowsPerTransaction
            if let rawWriter {
                let insert = try rawWriter.prepare(BenchRow.insertSQL)
                defer { sqlite3_finalize(insert) }
                for start in stride(from: 0, to: rows.count, by: size) {
                    rawWriter.exec("BEGIN IMMEDIATE")
                    for row in rows[start..<min(rows.count, start + size)] {
                        try row.insert(with: insert, on: rawWriter)
                    }
                    rawWriter.exec("COMMIT")
                }
            } else if let database {
                for start in stride(from: 0, to: rows.count, by: size) {
                    try database.write { db in
                        for row in rows[start..<min(rows.count, start + size)] {
                            var person = Person(row)
                            try person.insert(db)
                        }
                    }
                }
            }
        }

        /// Runs `body` on this thread while the readers look up rows on theirs; returns body's wall time,
        /// the lookups the readers completed meanwhile, and the CPU time the readers and `body` used.
        func readWhile(_ body: () throws -> Void) throws -> Phase {
            _ = try takeReadersCacheMisses()
            let stop = StopFlag()
            let group = DispatchGroup()
            let counts = LookupCounts(readers: ConcurrentWorkloads.readerCount)
            for reader in 0..<ConcurrentWorkloads.readerCount {
                group.enter()
                let thread = Thread { [self] in
                    counts.finish(reader, self.lookUp(reader: reader, until: stop))
                    group.leave()
                }
                thread.start()
            }
            let start = DispatchTime.now().uptimeNanoseconds
            let cpuStart = threadCPUSeconds()
            var failure: (any Error)?
            do { try body() } catch { failure = error }
            let bodyCPU = threadCPUSeconds() - cpuStart
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            stop.set()
            group.wait()
            if let failure { throw failure }
            if let error = counts.error { throw error }
            return Phase(
                seconds: seconds, lookups: counts.total, cacheMisses: try takeReadersCacheMisses(),
                readersCPU: counts.totalCPUSeconds, bodyCPU: bodyCPU)
        }

        private func lookUp(reader: Int, until stop: StopFlag) -> Result<ReaderTally, any Error> {
            Result {
                let cpuStart = threadCPUSeconds()
                var generator = SeededGenerator(seed: UInt64(60 + reader))
                var lookups = 0
                let byID = try CofferLookup.byID.get()
                let statement = try rawReaders.indices.contains(reader) ? rawReaders[reader].prepare(BenchRow.selectByIDSQL) : nil
                defer { statement.map { _ = sqlite3_finalize($0) } }
                // The stop flag's lock is a line both readers write: taken once per 16 lookups, it costs
                // neither side measurably (and overshoots the phase by at most 15 lookups a reader).
                while !stop.isSet {
                    for _ in 0..<16 {
                        let id = Int64.random(in: 1...Int64(rowCount), using: &generator)
                        if let statement {
                            _ = try RawLookup.row(id: id, statement: statement, connection: rawReaders[reader])
                        } else if let database {
                            // CofferLookup.person: one statement on a pooled reader.
                            guard try byID.fetchOne(database, id) != nil else { throw BenchError("no row \(id)") }
                        }
                    }
                    lookups += 16
                }
                return ReaderTally(lookups: lookups, cpuSeconds: threadCPUSeconds() - cpuStart)
            }
        }

        /// The readers' page-cache misses since the previous call, taken between phases so that no lookup
        /// pays for counting: raw C's reader connections directly, Coffer's two pooled readers held at once
        /// by nested reads (which read no page).
        private func takeReadersCacheMisses() throws -> Int {
            guard let database else { return rawReaders.reduce(0) { $0 + Self.takeCacheMisses($1.handle) } }
            return try database.read { first in
                try database.read { second in Self.takeCacheMisses(first.handle) + Self.takeCacheMisses(second.handle) }
            }
        }

        /// Page-cache misses on `handle` since the previous call (SQLite's counter, reset as read).
        private static func takeCacheMisses(_ handle: OpaquePointer) -> Int {
            var current: Int32 = 0
            var highwater: Int32 = 0
            sqlite3_db_status(handle, SQLITE_DBSTATUS_CACHE_MISS, &current, &highwater, 1)
            return Int(current)
        }
    }
}

/// What one reader thread did in a phase: lookups and the CPU time it was given.
struct ReaderTally {
    let lookups: Int
    let cpuSeconds: Double
}

/// One timed phase of W6: wall time, the readers' lookups and misses, the CPU time the readers and the
/// phase's own body (the writer, or a sleep) used.
struct Phase {
    let seconds: Double
    let lookups: Int
    let cacheMisses: Int
    let readersCPU: Double
    let bodyCPU: Double
}

/// The calling thread's CPU time so far (user and system), in seconds.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// A flag the main thread sets and reader threads poll.
final class StopFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// What each reader thread counted, or the error it stopped on.
final class LookupCounts: @unchecked Sendable {
    private let lock = NSLock()
    private var results: [Result<ReaderTally, any Error>?]

    init(readers: Int) { results = Array(repeating: nil, count: readers) }

    func finish(_ reader: Int, _ result: Result<ReaderTally, any Error>) {
        lock.withLock { results[reader] = result }
    }

    var total: Int { lock.withLock { results.reduce(0) { $0 + ((try? $1?.get().lookups) ?? 0) } } }

    var totalCPUSeconds: Double { lock.withLock { results.reduce(0) { $0 + ((try? $1?.get().cpuSeconds) ?? 0) } } }

    var error: (any Error)? {
        lock.withLock {
            for case .failure(let error)? in results { return error }
            return nil
        }
    }
}
