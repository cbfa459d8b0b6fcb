import Foundation

// Fuzz target: a whole small plaintext database file → salvage into memory (and, with the WAL byte set,
// the tail of the input as its WAL). Every row fits its table and every value is a salvaged value.
@testable import CofferFormat

func fuzz_salvage(_ bytes: [UInt8]) {
    guard bytes.count >= 512, bytes.count <= 1 << 20 else { return }
    let path = scratchFile("db", bytes)
    let walPath = path + "-wal"
    unlink(walPath)
    guard let salvager = try? Salvager(path: path, key: nil, useWAL: false) else { return }
    var sink = CollectingSink()
    guard let report = try? salvager.run(into: &sink) else { return }
    fuzzCheck(sink.finished, "sink not finished")
    fuzzCheck(report.pagesTotal == Int(salvager.source.pageCount), "page total")
    var emitted = 0
    for table in sink.tables {
        for row in sink.rows[table.name] ?? [] {
            emitted += 1
            fuzzCheck(row.values.count <= max(table.columns.count, 1) || table.isInferred, "row wider than its table")
        }
    }
    fuzzCheck(emitted <= bytes.count, "more rows than bytes")
}
