import Coffer
import Foundation

/// W14: how fast running work stops. On a copy of the filled 100,000-row table:
/// - `W14-cancel-p50`, `W14-cancel-p99`: an async `read` running a recursive CTE that walks the table by
///   primary key (100 million lookups; seconds to finish) is cancelled (`Task.cancel()`) 100 ms after it
///   starts, `rounds` times; each figure is the time from `cancel()` to the `CancellationError` caught in
///   the task (ops_per_s = 1 / that time).
/// - `W14-interrupt-p50`, `W14-interrupt-p99`: four readers run that read and the writer a write whose
///   statement runs as long; 100 ms in, `database.interrupt()`; each figure is the time from the call
///   until all five have thrown.
struct ControlWorkloads {
    let reads: ReadWorkloads
    let rounds: Int
    static let cancelAfter = 0.1
    static let readerCount = 4

    var harness: Harness { reads.harness }

    /// A read that walks `person` by id, one lookup per step, far longer than the 100 ms before the stop.
    static func longReadSQL(rows: Int) -> String {
        """
        WITH RECURSIVE walk(n, id) AS (SELECT 0, 1 UNION ALL \
        SELECT n + 1, (SELECT id FROM person WHERE id = walk.id % \(rows) + 1) FROM walk WHERE n < 100000000) \
        SELECT count(*) FROM walk
        """
    }

    /// Holds a time stamp set by another thread.
    final class Stamp: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [UInt64] = []
        func add() { lock.withLock { values.append(DispatchTime.now().uptimeNanoseconds) } }
        var all: [UInt64] { lock.withLock { values } }
    }

    func run(_ impl: Implementation) throws -> [Measurement] {
        guard !impl.isRaw else { return [] }
        let path = harness.freshPath("w14")
        try FileManager.default.copyItem(atPath: try reads.filledDatabase(impl), toPath: path)
        var configuration = harness.configuration(impl)
        configuration.readerCount = Self.readerCount
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        // Every reader open (keyed) before the first round: statements start at once.
        let warm = DispatchGroup()
        for _ in 0..<Self.readerCount {
            DispatchQueue.global().async(group: warm) { _ = try? database.read { _ in usleep(200_000) } }
        }
        warm.wait()
        let sql = Self.longReadSQL(rows: reads.rowCount)
        var cancels: [Double] = []
        for _ in 0..<rounds { cancels.append(try cancelOnce(database, sql: sql)) }
        var interrupts: [Double] = []
        for _ in 0..<rounds { interrupts.append(try interruptOnce(database, sql: sql)) }
        return Self.percentiles("W14-cancel", cancels, impl) + Self.percentiles("W14-interrupt", interrupts, impl)
    }

    private static func percentiles(_ name: String, _ values: [Double], _ impl: Implementation) -> [Measurement] {
        let sorted = values.sorted()
        return [("p50", 0.5), ("p99", 0.99)].map { suffix, fraction in
            let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
            return Measurement(workload: "\(name)-\(suffix)", impl: impl.rawValue, opsPerSecond: 1 / value, seconds: value)
        }
    }

    /// Seconds from `cancel()` to the task's catch of `CancellationError`.
    private func cancelOnce(_ database: Database, sql: String) throws -> Double {
        let thrown = Stamp()
        let done = DispatchSemaphore(value: 0)
        let task = Task {
            defer { done.signal() }
            do {
                _ = try await database.read { db in try db.fetchValue(Int.self, sql: sql) }
            } catch is CancellationError {
                thrown.add()
            } catch {}
        }
        Thread.sleep(forTimeInterval: Self.cancelAfter)
        let cancelled = DispatchTime.now().uptimeNanoseconds
        task.cancel()
        done.wait()
        guard let end = thrown.all.first else { throw BenchError("W14: the read finished instead of being cancelled") }
        return Double(end - cancelled) / 1e9
    }

    /// Seconds from `interrupt()` until the four readers and the writer have all thrown.
    private func interruptOnce(_ database: Database, sql: String) throws -> Double {
        let thrown = Stamp()
        let group = DispatchGroup()
        func run(_ body: @escaping @Sendable () throws -> Void) {
            // A thread each: GCD runs no more CPU-bound blocks at once than there are cores.
            group.enter()
            Thread {
                do { try body() } catch CofferError.interrupt { thrown.add() } catch {}
                group.leave()
            }.start()
        }
        for _ in 0..<Self.readerCount { run { _ = try database.read { db in try db.fetchValue(Int.self, sql: sql) } } }
        run {
            try database.write { db in
                try db.execute(sql: "CREATE TEMP TABLE IF NOT EXISTS w14(n INTEGER)")
                try db.execute(sql: "INSERT INTO w14 SELECT * FROM (\(sql))")
            }
        }
        Thread.sleep(forTimeInterval: Self.cancelAfter)
        let interrupted = DispatchTime.now().uptimeNanoseconds
        database.interrupt()
        if group.wait(timeout: .now() + 5) == .timedOut {
            // A statement that started after the call runs on: stop it, and say so.
            database.interrupt()
            group.wait()
            throw BenchError("W14: a statement started after interrupt(); lengthen cancelAfter")
        }
        let stamps = thrown.all
        guard stamps.count == Self.readerCount + 1, let last = stamps.max() else {
            throw BenchError("W14: \(stamps.count) of \(Self.readerCount + 1) statements were interrupted")
        }
        return Double(last - interrupted) / 1e9
    }
}
