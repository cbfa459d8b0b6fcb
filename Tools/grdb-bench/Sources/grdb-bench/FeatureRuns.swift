import Foundation
import GRDB
import GRDBSQLite

/// W8–W10 and W15 for one implementation: the files, what is timed and the figures, as coffer-bench runs them.
struct FeatureRuns {
    struct Output {
        var measurements: [Measurement] = []
        /// What each workload read (rows or a checksum), to compare the implementations.
        var sums: [String: Int64] = [:]
    }

    let harness: Harness
    let sizes: FeatureSizes
    let grdb: GRDBFeatureWorkloads

    /// W8: `W8-index` (all messages, once), `W8-optimize` (merge into one segment), then each query kind
    /// from a settled file (WAL checkpointed and emptied, page caches dropped), each query timed alone.
    func fullText(_ impl: Implementation, _ messages: [ChatGenerator.Message], _ kinds: QueryKinds<String>) throws -> Output {
        var output = Output()
        let path = harness.freshPath("w8")
        var index = 0.0
        var optimize = 0.0
        var searches: [(String, (times: [Double], rows: Int64))] = []
        switch impl {
        case .rawC:
            let connection = try RawConnection(path: path, cacheKiB: harness.cacheKiB)
            index = try timed { try RawFeatureWorkloads.index(messages, connection) }
            optimize = timed { connection.exec(FeatureSQL.optimize) }
            connection.exec("PRAGMA wal_checkpoint(TRUNCATE)")
            sqlite3_db_release_memory(connection.handle)
            for (name, texts) in kinds.all { searches.append((name, try RawFeatureWorkloads.search(texts, connection))) }
        case .grdb:
            let pool = try grdb.base.openPool(path)
            index = try timed { try grdb.index(messages, pool) }
            optimize = try timed { try pool.write { try $0.execute(sql: FeatureSQL.optimize) } }
            _ = try pool.writeWithoutTransaction { try $0.checkpoint(.truncate) }
            pool.releaseMemory()
            for (name, texts) in kinds.all {
                searches.append((name, try grdb.search(try texts.map { try FTS3Pattern(rawPattern: $0) }, pool)))
            }
            try pool.close()
        }
        output.measurements = [
            .perOperation("W8-index", impl, [index], operations: messages.count), .perOperation("W8-optimize", impl, [optimize]),
        ]
        for (name, (times, rows)) in searches {
            output.measurements.append(.perOperation(name, impl, times))
            output.sums[name] = rows
        }
        return output
    }

    /// W9 (GRDB only, as coffer-bench's is Coffer only): `W9-commits` one-row commits with nothing
    /// observed, `W9-commits-unrelated` with 100 observations of another table, `W9-commits-related` of
    /// the written table. Timing starts once every observation delivered its first value.
    func observation(_ impl: Implementation, _ rows: ArraySlice<BenchRow>) throws -> Output {
        guard impl == .grdb else { return Output() }
        var output = Output()
        for (name, table) in [("W9-commits", nil), ("W9-commits-unrelated", "other"), ("W9-commits-related", "person")] {
            let seconds = try harness.median(
                setUp: { try grdb.observedPool(harness.freshPath("w9"), observing: table) },
                { try grdb.commit(rows, $0.0) },
                tearDown: {
                    $0.1.forEach { $0.cancel() }
                    try $0.0.close()
                })
            output.measurements.append(
                Measurement(workload: name, impl: impl.rawValue, opsPerSecond: Double(rows.count) / seconds, seconds: seconds))
        }
        return output
    }

    /// W10 on one file written by GRDB (untimed): `W10-including` pages of 100 authors with their books,
    /// `W10-lazy` one author's books per read; medians of the repetitions on one open connection.
    func associations(_ impl: Implementation, _ path: String) throws -> Output {
        var output = Output()
        var sums: (Int64, Int64) = (0, 0)
        var including = 0.0
        var lazy = 0.0
        switch impl {
        case .rawC:
            let connection = try RawConnection(path: path, cacheKiB: harness.cacheKiB)
            including = try harness.median(setUp: {}) { _ in sums.0 = try RawFeatureWorkloads.pages(sizes.offsets, connection) }
            lazy = try harness.median(setUp: {}) { _ in
                sums.1 = try RawFeatureWorkloads.books(of: sizes.authorIDs, connection)
            }
        case .grdb:
            let pool = try grdb.base.openPool(path)
            let byID = Dictionary(
                uniqueKeysWithValues: try pool.read { try Author.order(Column("id")).fetchAll($0) }.map { ($0.id, $0) })
            let authors = try sizes.authorIDs.map { id in
                guard let author = byID[id] else { throw BenchError("W10: no author \(id)") }
                return author
            }
            including = try harness.median(setUp: {}) { _ in sums.0 = try grdb.pages(sizes.offsets, pool) }
            lazy = try harness.median(setUp: {}) { _ in sums.1 = try grdb.books(of: authors, pool) }
            try pool.close()
        }
        output.sums = ["W10-including": sums.0, "W10-lazy": sums.1]
        output.measurements = [
            Measurement(
                workload: "W10-including", impl: impl.rawValue, opsPerSecond: Double(sizes.pages) / including,
                seconds: including),
            Measurement(
                workload: "W10-lazy", impl: impl.rawValue, opsPerSecond: Double(sizes.lookups) / lazy, seconds: lazy),
        ]
        return output
    }

    /// W15: `W15-migrate` times one migrator run (W15's `v2` then `v3`, each its own transaction) on a
    /// fresh copy of `filled` (`rows` rows of `person`), opened untimed; rows/s, median of the repetitions.
    func migration(_ impl: Implementation, filled: String, rows: Int) throws -> Output {
        var sums: [Int64] = []
        func copy() throws -> String {
            let path = harness.freshPath("w15")
            try FileManager.default.copyItem(atPath: filled, toPath: path)
            return path
        }
        let seconds: Double
        switch impl {
        case .rawC:
            seconds = try harness.median(
                setUp: { try RawConnection(path: try copy(), cacheKiB: harness.cacheKiB) },
                { try RawFeatureWorkloads.migrate($0) },
                tearDown: { sums.append(try RawFeatureWorkloads.migrationChecksum($0)) })
        case .grdb:
            seconds = try harness.median(
                setUp: { () -> DatabasePool in
                    let pool = try grdb.base.openPool(try copy())
                    try pool.read { _ in }
                    return pool
                }, { try grdb.migrate($0) },
                tearDown: {
                    sums.append(try grdb.migrationChecksum($0))
                    try $0.close()
                })
        }
        guard let sum = sums.first, sums.allSatisfy({ $0 == sum }) else { throw BenchError("W15: repetitions differ") }
        var output = Output()
        output.sums["W15-migrate"] = sum
        output.measurements = [
            Measurement(workload: "W15-migrate", impl: impl.rawValue, opsPerSecond: Double(rows) / seconds, seconds: seconds)
        ]
        return output
    }
}
