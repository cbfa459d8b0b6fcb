import Coffer
import Foundation

/// The row W13 migrates: `message(id, conversation, body, sent)` of a plaintext file into an encrypted one.
@Table("message")
struct MigratedMessage: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var conversation: Int64
    var body: String
    var sent: Double
}

/// W13: a live migration of `rows` rows from a plaintext file into an encrypted database while the app
/// works, against the same copy done offline, and the app's work with and without the migration running.
/// Encrypted Coffer only.
/// - `W13-offline`: rows/s of the copy offline: one `INSERT … SELECT` from the attached plaintext file in
///   one transaction, nothing else running (what an offline migration does at best).
/// - `W13-migrate`: rows/s of `migrateLive` (default options, or `--migration-batch`) from declaration
///   to finished (the worker's own pace, not `finishNow()`), while one app thread does a one-row commit
///   (`insert` of a new message) and a lookup (`fetchOne` by a random id in a `read`): impl `coffer` with
///   the app at an app's pace, one commit and one lookup every `appInterval` seconds (default 5 ms, 200 of
///   each a second); impl `coffer-saturated` with the app's operations back to back (the worst case: the
///   app wants the writer all the time).
/// - `W13-app-commit`, `W13-app-lookup`: the app's operations per second (1 / mean time), p50 and p99,
///   during those migrations (impls `coffer`, `coffer-saturated`) and, for as many operations at the same
///   pace, on the migrated database with nothing else running (impls `coffer-idle`,
///   `coffer-saturated-idle`); and 2,000 of each back to back through the union of a migration declared
///   and paused at once (impl `coffer-paused`: what reading and writing through the union costs without
///   a batch competing).
struct LiveMigrationWorkloads {
    let harness: Harness
    let rows: Int
    let options: LiveMigrationOptions
    /// Seconds between the paced app's operation pairs.
    let appInterval: Double

    func run(_ impl: Implementation) throws -> [Measurement] {
        guard impl == .coffer else { return [] }
        let source = harness.freshPath("w13-plain")
        try makeSource(source)
        defer { try? FileManager.default.removeItem(atPath: source) }

        let offlineSeconds = try harness.median(setUp: { try openTarget() }) { database in
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS plain KEY ''", arguments: [source])
                try db.inTransaction(.immediate) {
                    try db.execute(
                        sql:
                            "INSERT INTO main.message (id, conversation, body, sent) SELECT id, conversation, body, sent FROM plain.message"
                    )
                }
                try db.execute(sql: "DETACH DATABASE plain")
            }
        } tearDown: { database in
            try database.close()
        }

        let paced = try migrateWhileTheAppWorks(source, interval: appInterval)
        let saturated = try migrateWhileTheAppWorks(source, interval: 0)
        var paused = AppTimes()
        for _ in 0..<harness.repetitions {
            let database = try openTarget()
            let migration = try database.migrateLive(
                MigratedMessage.self, from: .table("message", inFile: source), options: options)
            migration.pause()
            paused.add(
                AppThread(database: database, firstNewID: Int64(rows) + 1, idRange: rows, interval: 0).runAlone(operations: 2000))
            try database.close()
        }
        return [
            Measurement(
                workload: "W13-offline", impl: impl.rawValue, opsPerSecond: Double(rows) / offlineSeconds, seconds: offlineSeconds
            ),
            paced.migrate("coffer"),
            saturated.migrate("coffer-saturated"),
            paced.busy.measurement("W13-app-commit", impl: "coffer", \.commits),
            paced.busy.measurement("W13-app-lookup", impl: "coffer", \.lookups),
            paced.idle.measurement("W13-app-commit", impl: "coffer-idle", \.commits),
            paced.idle.measurement("W13-app-lookup", impl: "coffer-idle", \.lookups),
            saturated.busy.measurement("W13-app-commit", impl: "coffer-saturated", \.commits),
            saturated.busy.measurement("W13-app-lookup", impl: "coffer-saturated", \.lookups),
            saturated.idle.measurement("W13-app-commit", impl: "coffer-saturated-idle", \.commits),
            saturated.idle.measurement("W13-app-lookup", impl: "coffer-saturated-idle", \.lookups),
            paused.measurement("W13-app-commit", impl: "coffer-paused", \.commits),
            paused.measurement("W13-app-lookup", impl: "coffer-paused", \.lookups),
        ]
    }

    /// The migration's seconds and the app's operations during it and alone afterwards, over the repetitions.
    struct BusyRun {
        let rows: Int
        var seconds: [Double] = []
        var busy = AppTimes()
        var idle = AppTimes()

        func migrate(_ impl: String) -> Measurement {
            let seconds = median(seconds)
            return Measurement(workload: "W13-migrate", impl: impl, opsPerSecond: Double(rows) / seconds, seconds: seconds)
        }
    }

    /// Migrates the source into a fresh database while an app thread works at `interval` (0: back to
    /// back), then runs as many of the app's operations at the same pace with nothing else running.
    private func migrateWhileTheAppWorks(_ source: String, interval: Double) throws -> BusyRun {
        var run = BusyRun(rows: rows)
        for _ in 0..<harness.repetitions {
            let database = try openTarget()
            let app = AppThread(database: database, firstNewID: Int64(rows) + 1, idRange: rows, interval: interval)
            app.start()
            let start = DispatchTime.now().uptimeNanoseconds
            let migration = try database.migrateLive(
                MigratedMessage.self, from: .table("message", inFile: source), options: options)
            try migration.waitUntilFinishedBlocking()
            run.seconds.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            let during = app.stop()
            guard migration.progress.movedRows == rows else {
                throw BenchError("W13: moved \(migration.progress.movedRows) of \(rows) rows")
            }
            run.busy.add(during)
            // The same number of operations at the same pace with nothing else running: not even the
            // checkpoint of the frames the migration wrote (the worker starts it as it ends).
            try database.checkpoint(.truncate)
            let quiet = AppThread(database: database, firstNewID: Int64(rows) + 1_000_000, idRange: rows, interval: interval)
            run.idle.add(quiet.runAlone(operations: during.commits.count))
            try database.close()
        }
        return run
    }

    /// The plaintext source: `rows` messages, written by Coffer without encryption.
    private func makeSource(_ path: String) throws {
        let database = try Database(path: path, configuration: Configuration(encryption: .none))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE message(id INTEGER PRIMARY KEY, conversation INTEGER, body TEXT, sent REAL)")
            let statement = try db.makeStatement(sql: "INSERT INTO message VALUES (?, ?, ?, ?)")
            for id in 1...rows {
                try statement.execute([
                    id, id % 500, "message \(id): " + String(repeating: "lorem ipsum ", count: 1 + id % 9), Double(id),
                ])
            }
        }
        try database.close()
    }

    private func openTarget() throws -> Database {
        let database = try Database(path: harness.freshPath("w13"), configuration: harness.configuration(.coffer))
        try database.write { db in try db.execute(sql: try MigratedMessage.createTableSQL()) }
        return database
    }
}

/// Each operation's seconds, by kind.
struct AppRun {
    var commits: [Double] = []
    var lookups: [Double] = []
}

/// The app's operations over the repetitions.
struct AppTimes {
    private var runs = AppRun()

    mutating func add(_ run: AppRun) {
        runs.commits += run.commits
        runs.lookups += run.lookups
    }

    func measurement(_ workload: String, impl: String, _ kind: KeyPath<AppRun, [Double]>) -> Measurement {
        let times = runs[keyPath: kind].sorted()
        guard !times.isEmpty else { return Measurement(workload: workload, impl: impl, opsPerSecond: 0, seconds: 0) }
        let total = times.reduce(0, +)
        var measurement = Measurement(
            workload: workload, impl: impl, opsPerSecond: Double(times.count) / total, seconds: total / Double(times.count))
        measurement.p50Seconds = times[times.count / 2]
        measurement.p99Seconds = times[min(times.count - 1, times.count * 99 / 100)]
        return measurement
    }
}

extension LiveMigration {
    /// Blocks until the worker finished at its own pace (``finishNow()`` would drop its pauses), or throws
    /// what stopped it.
    func waitUntilFinishedBlocking() throws {
        final class Outcome: @unchecked Sendable {
            var error: (any Error)?
            let done = DispatchSemaphore(value: 0)
        }
        let outcome = Outcome()
        Task {
            do { try await waitUntilFinished() } catch { outcome.error = error }
            outcome.done.signal()
        }
        outcome.done.wait()
        if let error = outcome.error { throw error }
    }
}

/// One app thread: a one-row commit, then a lookup by a random existing id, again and again, one pair
/// every `interval` seconds (0: back to back). Only the operations are timed, not the waits between them.
final class AppThread: @unchecked Sendable {
    private let database: Database
    private let lock = NSLock()
    // Guarded by `lock`.
    private var stopping = false
    private var result = AppRun()
    private let done = DispatchSemaphore(value: 0)
    private var nextID: Int64
    private let idRange: Int
    private var generator = SystemRandomNumberGenerator()
    private let interval: UInt64

    init(database: Database, firstNewID: Int64, idRange: Int, interval: Double) {
        self.database = database
        self.nextID = firstNewID
        self.idRange = idRange
        self.interval = UInt64(max(0, interval) * 1e9)
    }

    func start() {
        Thread { [self] in
            var run = AppRun()
            var due = DispatchTime.now().uptimeNanoseconds
            while !lock.withLock({ stopping }) {
                step(&run)
                wait(until: &due)
            }
            lock.withLock { result = run }
            done.signal()
        }.start()
    }

    func stop() -> AppRun {
        lock.withLock { stopping = true }
        done.wait()
        return lock.withLock { result }
    }

    func runAlone(operations: Int) -> AppRun {
        var run = AppRun()
        var due = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<max(operations, 1) {
            step(&run)
            wait(until: &due)
        }
        return run
    }

    /// Sleeps until the next pair is due, `interval` after the last was; a pair that ran late starts the
    /// next at once and the schedule goes on from there.
    private func wait(until due: inout UInt64) {
        guard interval > 0 else { return }
        due += interval
        let now = DispatchTime.now().uptimeNanoseconds
        if due > now {
            Thread.sleep(forTimeInterval: Double(due - now) / 1e9)
        } else {
            due = now
        }
    }

    private func step(_ run: inout AppRun) {
        var start = DispatchTime.now().uptimeNanoseconds
        var message = MigratedMessage(id: nextID, conversation: 1, body: "new message", sent: 0)
        nextID += 1
        _ = try? database.write { db in try message.insert(db) }
        run.commits.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        let id = Int64.random(in: 1...Int64(idRange), using: &generator)
        start = DispatchTime.now().uptimeNanoseconds
        _ = try? database.read { db in try MigratedMessage.filter { $0.id == id }.fetchOne(db) }
        run.lookups.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
    }
}
