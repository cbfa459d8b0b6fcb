import CSQLCipher
import Foundation

/// Timing shared by the per-query workloads (W8 and W8-pinyin): one body's seconds, a latency
/// measurement from single timings, a raw C query loop and an FTS4 index's size.
enum QueryTiming {
    /// Seconds `body` takes.
    static func seconds(_ body: () throws -> Void) throws -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }

    /// ops/s from the total time; p50 and p99 of the single timings (per-query latency).
    static func measurement(_ name: String, _ impl: Implementation, _ times: [Double], operations: Int) -> Measurement {
        let total = times.reduce(0, +)
        let sorted = times.sorted()
        var measurement = Measurement(
            workload: name, impl: impl.rawValue, opsPerSecond: Double(operations * times.count) / total, seconds: total)
        if times.count > 1 {
            measurement.p50Seconds = sorted[sorted.count / 2]
            measurement.p99Seconds = sorted[min(sorted.count - 1, sorted.count * 99 / 100)]
        }
        return measurement
    }

    /// Each match text timed alone on `statement` (its parameter 1): bind, step through the rows, each
    /// read by `row` into the page, reset. `label` names the workload in an error.
    static func rawQueries<Row>(
        _ patterns: [String], on statement: OpaquePointer, _ connection: RawConnection, label: String,
        row: (OpaquePointer) -> Row
    ) throws -> [Double] {
        var times: [Double] = []
        var checksum = 0
        for pattern in patterns {
            let start = DispatchTime.now().uptimeNanoseconds
            var page: [Row] = []
            let code = RawConnection.withStaticText([pattern], from: 1, on: statement) { () -> Int32 in
                var code = sqlite3_step(statement)
                while code == SQLITE_ROW {
                    page.append(row(statement))
                    code = sqlite3_step(statement)
                }
                return code
            }
            sqlite3_reset(statement)
            guard code == SQLITE_DONE else {
                throw BenchError("\(label) raw query: \(String(cString: sqlite3_errmsg(connection.handle)))")
            }
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            checksum &+= page.count
        }
        if checksum == 42 { print("") }  // keeps the reads
        return times
    }

    /// The first column of the first row of `sql` as a number (0 when there is none).
    static func value(_ handle: OpaquePointer, _ sql: String) -> Double {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        return sqlite3_step(statement) == SQLITE_ROW ? sqlite3_column_double(statement, 0) : 0
    }

    /// The bytes of the FTS4 table `table`'s segments (its index).
    static func indexBytes(_ handle: OpaquePointer, table: String) -> Double {
        value(handle, "SELECT total(length(block)) FROM \(table)_segments")
            + value(handle, "SELECT total(length(root)) FROM \(table)_segdir")
    }

    /// The bytes of the FTS5 table `table`'s index: its data blocks and the terms of its segment index.
    static func fts5IndexBytes(_ handle: OpaquePointer, table: String) -> Double {
        value(handle, "SELECT total(length(block)) FROM \(table)_data")
            + value(handle, "SELECT total(length(term)) FROM \(table)_idx")
    }
}
