import CSQLCipher
import Coffer
import Foundation

/// W15's table after `v3`, for `W15-rebuild`: `age` gone, `score` indexed (`person_on_score`).
@Table("person")
struct MigratedPerson: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64
    var name: String
    var email: String
    var score: Int64

    static var indexes: [TableIndex<MigratedPerson>] { [TableIndex(columns.score)] }
}

/// W15 (a migration step, issue 43): one migrator run of two migrations on a file of `rows` rows of
/// `person(id, name, email, age)`, each migration in its own transaction. `v2` adds `score` (`ALTER TABLE
/// … ADD COLUMN`), fills it from `age` and indexes it; `v3` rebuilds the table without `age` (SQLite's
/// create-copy-drop-rename procedure, as 3.15 cannot drop a column) and indexes `score` again.
///
/// The file is filled once per implementation, untimed, by Coffer with that implementation's configuration
/// (raw C opens it with the passphrase or none); each repetition copies it and opens the copy, untimed.
/// - `W15-migrate`: rows/s of the migration run (median of the repetitions). Coffer: a ``Migrator`` with
///   both migrations as raw SQL (`execute(sql:)`), `migrate(database)` as a user calls it, which also
///   creates and writes its `coffer_migrations` table and turns foreign keys off around each migration.
///   Raw C: the same statements by `sqlite3_exec`, each migration in one `BEGIN IMMEDIATE` transaction
///   that also sets `PRAGMA user_version`.
/// - `W15-rebuild` (Coffer only): the same run with `v3` written as `rebuildTable(MigratedPerson.self)`.
///
/// Every side's result is checked untimed: `count(*)`, `sum(score)`, `sum(length(name))`, the columns
/// (`age` gone) and the index, compared across implementations. `Tools/grdb-bench` runs the same SQL.
struct MigrationStepWorkloads {
    let harness: Harness
    let rows: Int
    let checksums: ChecksumLog

    /// The migrator `W15-migrate` runs: both migrations as raw SQL.
    static var migrator: Migrator {
        var migrator = Migrator()
        for (name, statements) in MigrationSQL.migrations {
            migrator.register(name) { db in
                for sql in statements { try db.execute(sql: sql) }
            }
        }
        return migrator
    }

    /// The migrator `W15-rebuild` runs: `v3` by Coffer's `rebuildTable`.
    static var rebuildMigrator: Migrator {
        var migrator = Migrator()
        migrator.register("v2") { db in
            for sql in MigrationSQL.v2 { try db.execute(sql: sql) }
        }
        migrator.register("v3") { db in try db.rebuildTable(MigratedPerson.self) }
        return migrator
    }

    func run(_ impl: Implementation) throws -> [Measurement] {
        let filled = harness.freshPath("w15-filled")
        try fill(filled, impl)
        defer { try? FileManager.default.removeItem(atPath: filled) }
        if impl.isRaw {
            var sums: [Int64] = []
            let seconds = try harness.median(
                setUp: { try RawConnection(path: try copy(filled), key: impl.rawKey, cacheKiB: harness.cacheKiB) },
                { try Self.migrate($0) },
                tearDown: {
                    sums.append(try Self.checksum($0))
                    $0.close()
                })
            try record("W15-migrate", impl, sums)
            return [measurement("W15-migrate", impl, seconds)]
        }
        var measurements: [Measurement] = []
        for (name, migrator) in [("W15-migrate", Self.migrator), ("W15-rebuild", Self.rebuildMigrator)] {
            var sums: [Int64] = []
            let seconds = try harness.median(
                setUp: { try Database(path: try copy(filled), configuration: harness.configuration(impl)) },
                { try migrator.migrate($0) },
                tearDown: {
                    sums.append(try $0.read { try Self.checksum($0) })
                    try $0.close()
                })
            // Both lines leave the same rows: W15-rebuild is checked against W15-migrate's checksum.
            try record("W15-migrate", impl, sums)
            measurements.append(measurement(name, impl, seconds))
        }
        return measurements
    }

    private func measurement(_ name: String, _ impl: Implementation, _ seconds: Double) -> Measurement {
        Measurement(workload: name, impl: impl.rawValue, opsPerSecond: Double(rows) / seconds, seconds: seconds)
    }

    private func record(_ name: String, _ impl: Implementation, _ sums: [Int64]) throws {
        guard let sum = sums.first, sums.allSatisfy({ $0 == sum }) else { throw BenchError("\(name): repetitions differ") }
        checksums.record(name, impl, sum)
    }

    /// Writes `person` and its rows through Coffer in one transaction (untimed), then closes the file.
    private func fill(_ path: String, _ impl: Implementation) throws {
        let database = try Database(path: path, configuration: harness.configuration(impl))
        try database.write { db in
            try db.execute(sql: MigrationSQL.schema)
            try db.execute(sql: MigrationSQL.fill(rows: rows))
        }
        try database.close()
    }

    /// A fresh copy of `filled` (and of its WAL, should closing have left one).
    private func copy(_ filled: String) throws -> String {
        let path = harness.freshPath("w15")
        try FileManager.default.copyItem(atPath: filled, toPath: path)
        if FileManager.default.fileExists(atPath: filled + "-wal") {
            try FileManager.default.copyItem(atPath: filled + "-wal", toPath: path + "-wal")
        }
        return path
    }

    /// Coffer's checksum, in a read.
    static func checksum(_ db: Connection) throws -> Int64 {
        guard let sums = try db.fetchOne(sql: MigrationSQL.sums) else { throw BenchError("W15: no sums") }
        return try MigrationSQL.checksum(
            count: try sums.decode(at: 0), score: try sums.decode(at: 1), nameBytes: try sums.decode(at: 2),
            columns: try db.fetchAll(sql: MigrationSQL.columns).compactMap { $0["name"] },
            indexes: try db.fetchAll(sql: MigrationSQL.indexes).compactMap { $0["name"] })
    }

    /// Raw C's migration run: each migration's statements in one transaction, recorded in `user_version`.
    static func migrate(_ connection: RawConnection) throws {
        for (version, (_, statements)) in zip(2..., MigrationSQL.migrations) {
            try connection.execute("BEGIN IMMEDIATE")
            do {
                for sql in statements { try connection.execute(sql) }
                try connection.execute("PRAGMA user_version = \(version)")
                try connection.execute("COMMIT")
            } catch {
                connection.exec("ROLLBACK")
                throw error
            }
        }
    }

    /// Raw C's checksum.
    static func checksum(_ connection: RawConnection) throws -> Int64 {
        func texts(_ sql: String) throws -> [String] {
            let statement = try connection.prepare(sql)
            defer { sqlite3_finalize(statement) }
            var texts: [String] = []
            while sqlite3_step(statement) == SQLITE_ROW {
                texts.append(sqlite3_column_text(statement, 1).map { String(cString: $0) } ?? "")
            }
            return texts
        }
        let sums = try connection.prepare(MigrationSQL.sums)
        defer { sqlite3_finalize(sums) }
        try connection.step(sums, expecting: SQLITE_ROW)
        return try MigrationSQL.checksum(
            count: sqlite3_column_int64(sums, 0), score: sqlite3_column_int64(sums, 1), nameBytes: sqlite3_column_int64(sums, 2),
            columns: try texts(MigrationSQL.columns), indexes: try texts(MigrationSQL.indexes))
    }
}

extension RawConnection {
    /// Runs `sql` (one or more statements), throwing SQLite's message on failure.
    func execute(_ sql: String) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw BenchError("\(code): \(String(cString: sqlite3_errmsg(handle)))") }
    }
}
