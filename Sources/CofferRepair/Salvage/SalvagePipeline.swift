// SalvagePipeline — the salvage and its sink on two threads, joined by a bounded queue of row batches.
//
// Why: reading (HMAC, AES, B-tree and record decoding) and writing (SQLite inserts, AES and HMAC of every
// output page) each cost about half of a repair; on two cores they can overlap.
//
// How:
// - The salvager runs on the calling thread into a `Front` sink that only groups rows into batches (one
//   table per batch, at most `batchRows` rows or `batchBytes` bytes of values; a single larger row makes a
//   batch of its own) and pushes events — begin, rows, finish — into one FIFO, so the sink sees them in
//   exactly the order the salvager produced them.
// - A writer thread pops the events and calls the real sink, which it owns until the thread ends: `begin`,
//   rows and `tableTreesWalked` inside the sink's `bulkLoad` (one transaction for RepairWriter), then
//   `finish`. RepairWriter builds the indexes at `tableTreesWalked`, while the salvager walks the input's
//   indexes and scans for orphans.
// - Memory is bounded: at most `capacity` batches wait in the queue, plus the one being filled and the one
//   being written, plus batches written since the salvager's last push (handed back so that the thread
//   that allocated the rows frees them; see `retire`). A full queue blocks the salvager (the writer is the
//   slower side); an empty one blocks the writer.
// - Errors: a sink error closes the queue; the salvager's next push throws it, so the salvage stops there,
//   and `run` rethrows it. A salvage error cancels the queue: the writer stops without calling `finish`.
//   Either way `run` returns only after the writer thread has ended, so the caller can clean OUTPUT up.

import Foundation

/// One step of a salvage as the sink receives it.
enum SalvageEvent: Sendable {
    case begin(TableDescription)
    case rows([SalvagedRow], TableDescription)
    case treesWalked(Schema)
    case finish(Schema)
}

/// A value owned by one thread at a time. The handoffs are ordered by the writer thread's start and by the
/// completion condition in ``SalvagePipeline``, never concurrent.
private final class Handoff<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}

/// Sizes of a pipelined salvage (see ``Salvager/run(into:pipeline:progress:)``).
public struct SalvagePipeline: Sendable {
    /// Rows per batch at most.
    public var batchRows: Int
    /// Bytes of values per batch at most (a single larger row is a batch of its own).
    public var batchBytes: Int
    /// Batches waiting between the two threads at most.
    public var capacity: Int

    /// The default sizes: batches of up to 2048 rows or 1 MiB, at most 4 waiting, so about 6 MiB of rows in
    /// flight whatever the file size.
    public init(batchRows: Int = 2048, batchBytes: Int = 1 << 20, capacity: Int = 4) {
        self.batchRows = max(1, batchRows)
        self.batchBytes = max(1, batchBytes)
        self.capacity = max(1, capacity)
    }

    /// The sink the salvager writes into on its own thread: it batches rows and queues them.
    struct Front: SalvageSink {
        let queue: BoundedQueue<SalvageEvent>
        let sizes: SalvagePipeline
        var table: TableDescription?
        var rows: [SalvagedRow] = []
        var bytes = 0

        mutating func begin(table: TableDescription) throws {
            try flush()
            try queue.push(.begin(table))
        }

        mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {
            if let current = self.table, current.name != table.name || current.rootPage != table.rootPage {
                try flush()
            }
            if self.table == nil { self.table = table }
            rows.append(row)
            bytes += Self.size(of: row)
            if rows.count >= sizes.batchRows || bytes >= sizes.batchBytes { try flush() }
        }

        mutating func tableTreesWalked(schema: Schema) throws {
            try flush()
            try queue.push(.treesWalked(schema))
        }

        mutating func finish(schema: Schema) throws {
            try flush()
            try queue.push(.finish(schema))
        }

        mutating func flush() throws {
            guard let table, !rows.isEmpty else { return }
            let batch = rows
            rows = []
            rows.reserveCapacity(min(batch.count, sizes.batchRows))
            bytes = 0
            self.table = nil
            try queue.push(.rows(batch, table))
        }

        static func size(of row: SalvagedRow) -> Int {
            var total = 16
            for value in row.values {
                switch value {
                case .text(let bytes), .blob(let bytes): total += bytes.count + 16
                default: total += 16
                }
            }
            return total
        }
    }

    /// Runs `produce` (the salvage, writing into the given front sink) on the calling thread and feeds
    /// `sink` on a writer thread; returns `produce`'s result once the writer has finished. The first error
    /// of either side is thrown, after the writer thread has ended.
    func run<Sink: SalvageSink, Result>(
        sink: inout Sink, produce: (inout Front) throws -> Result
    ) throws -> Result {
        let queue = BoundedQueue<SalvageEvent>(capacity: capacity)
        let owned = Handoff(sink)
        // The writer thread calls the sink through this non-generic box only (the sink's own type is not
        // Sendable; the box is handed over once, at thread start). Rows go in as one bulk load; `finish`
        // (indexes, views, triggers) comes after it.
        let consumer = Handoff<() throws -> Void> {
            var schema: Schema?
            try Sink.bulkLoad(into: &owned.value) { sink in
                while let event = queue.pop() {
                    switch event {
                    case .begin(let table): try sink.begin(table: table)
                    case .rows(let rows, let table):
                        try sink.insert(rows, into: table)
                        queue.retire(event)
                    case .treesWalked(let walked): try sink.tableTreesWalked(schema: walked)
                    case .finish(let last):
                        schema = last
                        return
                    }
                }
            }
            if let schema { try owned.value.finish(schema: schema) }
        }
        let done = NSCondition()
        let finished = Handoff(false)
        let thread = Thread {
            defer {
                done.lock()
                finished.value = true
                done.broadcast()
                done.unlock()
            }
            do {
                try consumer.value()
            } catch {
                queue.fail(error)
            }
        }
        thread.name = "coffer.repair.writer"
        thread.stackSize = 8 << 20
        thread.start()

        var front = Front(queue: queue, sizes: self)
        let outcome: Swift.Result<Result, any Error>
        do {
            let value = try produce(&front)
            queue.finishProducing()
            outcome = .success(value)
        } catch {
            queue.cancel()
            outcome = .failure(error)
        }
        done.lock()
        while !finished.value { done.wait() }
        done.unlock()
        sink = owned.value
        // A writer failure is the root cause whenever there is one (the salvage then failed on its push).
        if let writerFailure = queue.failure { throw writerFailure }
        return try outcome.get()
    }
}

extension Salvager {
    /// Runs the salvage on the calling thread while `sink` is fed on a second thread through a bounded queue
    /// (see ``SalvagePipeline``): the same events in the same order as ``run(into:progress:)``, in about
    /// the time of the slower side. Returns once the sink has finished; the first error of either side is
    /// thrown after the second thread has ended.
    ///
    /// ```swift
    /// var writer = try RepairWriter(path: "recovered.db", encryption: .passphrase("secret"))
    /// let report = try salvager.run(into: &writer, pipeline: SalvagePipeline())
    /// try writer.close()
    /// ```
    public func run<Sink: SalvageSink>(
        into sink: inout Sink, pipeline: SalvagePipeline, progress: ((SalvageProgress) -> Void)? = nil
    ) throws -> RepairReport {
        try pipeline.run(sink: &sink) { front in try run(into: &front, progress: progress) }
    }
}
