// The two-thread salvage: same output as the one-thread run, a bounded queue under a slow writer, and a
// writer failure that stops the salvage and is the error `run` throws.

import Coffer
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Counters shared by the salvage thread and the writer thread.
private final class Progress: @unchecked Sendable {
    private let lock = NSLock()
    private var produced = 0
    private var consumed = 0
    private var largestGap = 0

    func produce(_ count: Int) {
        lock.lock()
        produced += count
        largestGap = max(largestGap, produced - consumed)
        lock.unlock()
    }

    func consume(_ count: Int) {
        lock.lock()
        consumed += count
        lock.unlock()
    }

    var snapshot: (produced: Int, consumed: Int, largestGap: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (produced, consumed, largestGap)
    }
}

/// A writer that sleeps on every batch and can fail after a number of batches.
private struct SlowSink: SalvageSink {
    let progress: Progress
    var failAfterBatches: Int?
    var batches = 0
    var finished = false
    var tables: [String] = []

    struct Failure: Error, Equatable {}

    mutating func begin(table: TableDescription) throws { tables.append(table.name) }

    mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {
        try insert([row], into: table)
    }

    mutating func insert(_ rows: [SalvagedRow], into table: TableDescription) throws {
        batches += 1
        if let failAfterBatches, batches > failAfterBatches { throw Failure() }
        Thread.sleep(forTimeInterval: 0.002)
        progress.consume(rows.count)
    }

    mutating func finish(schema: Schema) throws { finished = true }
}

/// An element whose instances are counted, to see what a queue keeps alive.
private final class CountedBatch: Sendable {
    private static let live = Progress()
    static var count: Int { live.snapshot.produced - live.snapshot.consumed }
    init() { Self.live.produce(1) }
    deinit { Self.live.consume(1) }
}

final class SalvagePipelineTests: XCTestCase {
    private let table = TableDescription(
        name: "t", rootPage: 2, sql: "CREATE TABLE t(x)",
        columns: [ColumnDescription(name: "x", declaredType: "", affinity: .blob)], rowidAliasColumn: nil,
        withoutRowid: false, primaryKeyColumns: [], isInferred: false)

    func testSalvageThroughThePipelineMatchesTheOneThreadRun() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("src.db")
        try Shell.sqlcipher(path, standardSchemaSQL)
        let (direct, directReport) = try salvage(path, key: "pw")
        var piped = CollectingSink()
        let salvager = try Salvager(path: path, key: .passphrase("pw"))
        let report = try salvager.run(into: &piped, pipeline: SalvagePipeline(batchRows: 7, batchBytes: 4096, capacity: 2))
        XCTAssertEqual(piped.tables.map(\.name), direct.tables.map(\.name))
        XCTAssertEqual(piped.rows, direct.rows)  // same rows, same order
        XCTAssertTrue(piped.finished)
        XCTAssertEqual(report.rowsSalvaged, directReport.rowsSalvaged)
        XCTAssertEqual(report.tables, directReport.tables)
    }

    func testQueueStaysBoundedUnderASlowWriter() throws {
        let progress = Progress()
        let sizes = SalvagePipeline(batchRows: 10, batchBytes: 1 << 20, capacity: 3)
        var sink = SlowSink(progress: progress)
        let row = SalvagedRow(rowid: 1, values: [.text(Array("x".utf8))])
        try sizes.run(sink: &sink) { front in
            try front.begin(table: table)
            for _ in 0..<2000 {
                try front.insert(row, into: table)
                progress.produce(1)
            }
            try front.finish(schema: Schema(entries: [], tables: [], isReadable: true))
        }
        let seen = progress.snapshot
        XCTAssertEqual(seen.consumed, 2000)
        XCTAssertTrue(sink.finished)
        XCTAssertEqual(sink.tables, [table.name])
        // Queued batches + the batch being filled + the batch being written, never more.
        XCTAssertLessThanOrEqual(seen.largestGap, (sizes.capacity + 2) * sizes.batchRows)
    }

    /// A batch the writer took and handed back is freed at the salvager's next push: the queue keeps no
    /// taken batch alive (it once kept up to 64 of them, a whole 100,000-row table's rows in a repair).
    func testQueueKeepsNoTakenBatchAlive() throws {
        let queue = BoundedQueue<CountedBatch>(capacity: 4)
        let before = CountedBatch.count
        var largest = 0
        for _ in 0..<300 {
            try queue.push(CountedBatch())
            if let batch = queue.pop() { queue.retire(batch) }
            largest = max(largest, CountedBatch.count - before)
        }
        // The batch just pushed and taken, waiting in the retired list for the next push.
        XCTAssertLessThanOrEqual(largest, 2)
        queue.finishProducing()
        XCTAssertNil(queue.pop())
    }

    func testBatchesAreBoundedByBytesToo() throws {
        let progress = Progress()
        var sink = SlowSink(progress: progress)
        let big = SalvagedRow(rowid: 1, values: [.blob([UInt8](repeating: 7, count: 3000))])
        try SalvagePipeline(batchRows: 1000, batchBytes: 10_000, capacity: 1).run(sink: &sink) { front in
            try front.begin(table: table)
            for _ in 0..<40 { try front.insert(big, into: table) }
            try front.finish(schema: Schema(entries: [], tables: [], isReadable: true))
        }
        XCTAssertEqual(sink.batches, 10)  // 4 rows of ~3 KB reach 10,000 bytes
    }

    func testWriterFailureStopsTheSalvageAndIsThrown() throws {
        let progress = Progress()
        var sink = SlowSink(progress: progress, failAfterBatches: 3)
        let row = SalvagedRow(rowid: 1, values: [.integer(1)])
        var produced = 0
        XCTAssertThrowsError(
            try SalvagePipeline(batchRows: 10, capacity: 2).run(sink: &sink) { front in
                try front.begin(table: table)
                for _ in 0..<100_000 {
                    try front.insert(row, into: table)
                    produced += 1
                }
                try front.finish(schema: Schema(entries: [], tables: [], isReadable: true))
            }
        ) { error in
            XCTAssertEqual(error as? SlowSink.Failure, SlowSink.Failure())
        }
        XCTAssertLessThan(produced, 1000)  // the salvage stopped at a push soon after the failure
        XCTAssertFalse(sink.finished)
    }

    func testSalvageFailureEndsTheWriterWithoutFinish() throws {
        struct SalvageFailure: Error {}
        let progress = Progress()
        var sink = SlowSink(progress: progress)
        XCTAssertThrowsError(
            try SalvagePipeline(batchRows: 5, capacity: 1).run(sink: &sink) { front in
                try front.begin(table: table)
                for _ in 0..<50 { try front.insert(SalvagedRow(rowid: 1, values: []), into: table) }
                throw SalvageFailure()
            }
        ) { error in
            XCTAssertTrue(error is SalvageFailure)
        }
        XCTAssertFalse(sink.finished)
    }

    func testWriterFailureLeavesNoOutputThroughTheCLIPath() throws {
        // A RepairWriter whose database is closed under it fails on its first batch: the error comes back
        // from `run`, and the caller (as RepairCommand does) removes the partial file.
        let dir = try TemporaryDirectory()
        let source = dir.path("src.db")
        try Shell.sqlcipher(source, standardSchemaSQL)
        let output = dir.path("out.db.coffer-partial")
        var writer = try RepairWriter(path: output, encryption: .passphrase("pw"))
        try writer.database.close()
        let salvager = try Salvager(path: source, key: .passphrase("pw"))
        XCTAssertThrowsError(try salvager.run(into: &writer, pipeline: SalvagePipeline()))
        for suffix in ["", "-wal", "-shm", "-journal"] { try? FileManager.default.removeItem(atPath: output + suffix) }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output))
    }
}
