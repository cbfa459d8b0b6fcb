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
/// Encrypted Coffer only (impl `coffer`; the app's figures without migration are impl `coffer-idle`).
/// - `W13-offline`: rows/s of the copy offline: one `INSERT … SELECT` from the attached plaintext file in
///   one transaction, nothing else running (what an offline migration does at best).
/// - `W13-migrate`: rows/s of `migrateLive` (default options, or `--migration-batch`) from declaration
///   to finished (the worker's own pace, not `finishNow()`), while one app
///   thread alternates a one-row commit (`insert` of a new message) and a lookup (`fetchOne` by a random id
///   in a `read`), back to back.
/// - `W13-app-commit`, `W13-app-lookup`: the app's operations per second (1 / mean time), p50 and p99,
///   during that migration (impl `coffer`) and on the migrated database with nothing else running (impl
///   `coffer-idle`), for as many operations; and 2,000 of each through the union of a migration declared
///   and paused at once (impl `coffer-paused`: what reading and writing through the union costs without
///   a batch competing).
struct LiveMigrationWorkloads {
    let harness: Harness
    let rows: Int
    let options: LiveMigrationOptions

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

        var migrateTimes: [Double] = []
        var busy = AppTimes()
        var idle = AppTimes()
        for _ in 0..<harness.repetitions {
            let database = try openTarget()
            let app = AppThread(database: database, firstNewID: Int64(rows) + 1, idRange: rows)
            app.start()
            let start = DispatchTime.now().uptimeNanoseconds
            let migration = try database.migrateLive(
                MigratedMessage.self, from: .table("message", inFile: source), options: options)
            try migration.waitUntilFinishedBlocking()
            migrateTimes.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            let during = app.stop()
            guard migration.progress.movedRows == rows else {
                throw BenchError("W13: moved \(migration.progress.movedRows) of \(rows) rows")
            }
            busy.add(during)
            // The same number of operations with nothing else running.
            let quiet = AppThread(database: database, firstNewID: Int64(rows) + 1_000_000, idRange: rows)
            idle.add(quiet.runAlone(operations: during.commits.count))
            try database.close()
        }
        var paused = AppTimes()
        for _ in 0..<harness.repetitions {
            let database = try openTarget()
            let migration = try database.migrateLive(
                MigratedMessage.self, from: .table("message", inFile: source), options: options)
            migration.pause()
            paused.add(AppThread(database: database, firstNewID: Int64(rows) + 1, idRange: rows).runAlone(operations: 2000))
            try database.close()
        }
        let migrate = median(migrateTimes)
        return [
            Measurement(
                workload: "W13-offline", impl: impl.rawValue, opsPerSecond: Double(rows) / offlineSeconds, seconds: offlineSeconds
            ),
            Measurement(workload: "W13-migrate", impl: impl.rawValue, opsPerSecond: Double(rows) / migrate, seconds: migrate),
            busy.measurement("W13-app-commit", impl: "coffer", \.commits),
            busy.measurement("W13-app-lookup", impl: "coffer", \.lookups),
            idle.measurement("W13-app-commit", impl: "coffer-idle", \.commits),
            idle.measurement("W13-app-lookup", impl: "coffer-idle", \.lookups),
            paused.measurement("W13-app-commit", impl: "coffer-paused", \.commits),
            paused.measurement("W13-app-lookup", impl: "coffer-paused", \.lookups),
        ]
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

/// One app thread: a one-row commit, then a lookup by a random existing id, again and again.
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

    init(database: Database, firstNewID: Int64, idRange: Int) {
        self.database = database
        self.nextID = firstNewID
        self.idRange = idRange
    }

    func start() {
        Thread { [self] in
            var run = AppRun()
            while !lock.withLock({ stopping }) { step(&run) }
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
        for _ in 0..<max(operations, 1) { step(&run) }
        return run
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
