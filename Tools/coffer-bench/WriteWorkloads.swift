import CSQLCipher
import Coffer
import Foundation

/// W0 (open), W1 (100,000 inserts in one transaction), W2 (one-row transactions).
///
/// Coffer inserts `@Table` records with `insert(db)`, as the README teaches; `W1-sql` inserts the same
/// rows with `execute(sql:arguments:)` and an array literal, the hand-written SQL path.
struct WriteWorkloads {
    let harness: Harness
    let rows: [BenchRow]
    /// The same rows as records, made before any timing.
    let people: [Person]
    let transactionCount: Int
    var rowCount: Int { rows.count }

    init(harness: Harness, rows: [BenchRow], transactionCount: Int) {
        self.harness = harness
        self.rows = rows
        self.people = rows.map(Person.init)
        self.transactionCount = transactionCount
    }

    static let passphrase = "benchmark passphrase"

    func configuration(_ impl: Implementation) -> Configuration { harness.configuration(impl) }

    /// A database filled with `rows` rows, closed, for the read workloads and W0.
    func prepareDatabase(_ impl: Implementation, rows: Int) throws -> String {
        let path = harness.freshPath("fill")
        let database = try Database(path: path, configuration: configuration(impl))
        try database.write { db in
            try db.executeScript(BenchRow.schema)
            let insert = try db.cachedStatement(sql: BenchRow.insertSQL)
            for row in self.rows.prefix(rows) { try insert.execute(row.arguments) }
        }
        try database.close()
        return path
    }

    /// W0: the first open (key derivation + one query) and one more reader connection.
    func openCosts(_ impl: Implementation) throws -> [Measurement] {
        let path = try prepareDatabase(impl, rows: 100)
        // SQLCipher initialises its crypto provider when the first connection of the process opens and
        // tears it down when the last one closes: "first open" runs with no other connection open,
        // "second connection" with one already open, in every implementation.
        let first: Double
        let second: Double
        switch impl {
        case .rawC, .rawCPlain:
            let key = impl.rawKey
            first = try harness.median(setUp: {}) { _ in
                let connection = try RawConnection(path: path, key: key)
                connection.exec("SELECT count(*) FROM person")
            }
            // The limit for a second connection: SQLCipher's raw-key form, key derived once beforehand.
            let spec = key == nil ? nil : try rawKeySpec(path: path)
            let opened = try RawConnection(path: path, key: key)
            second = try harness.median(setUp: {}) { _ in
                let connection = try RawConnection(path: path, key: spec, readOnly: true)
                connection.exec("SELECT count(*) FROM person")
            }
            withExtendedLifetime(opened) {}
        case .coffer, .cofferPlain:
            first = try harness.median(
                setUp: {},
                { _ in
                    let database = try Database(path: path, configuration: configuration(impl))
                    _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM person") }
                    try database.close()
                })
            // A second reader while the first is busy: the pool opens one more, with the derived key.
            second = try harness.median(
                setUp: { () -> Database in
                    let database = try Database(path: path, configuration: configuration(impl))
                    _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM person") }
                    return database
                },
                { database in
                    try database.read { _ in
                        _ = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM person") }
                    }
                }, tearDown: { try $0.close() })
        }
        return [
            Measurement(workload: "W0-first-open", impl: impl.rawValue, opsPerSecond: 1 / first, seconds: first),
            Measurement(workload: "W0-second-connection", impl: impl.rawValue, opsPerSecond: 1 / second, seconds: second),
        ]
    }

    /// W1: `rowCount` rows in one transaction.
    func bulkInsert(_ impl: Implementation) throws -> Measurement {
        let seconds = try harness.median(setUp: { try open(impl, workload: "w1") }) { target in
            try insert(into: target, rows: rowCount, perTransaction: rowCount)
        }
        return Measurement(workload: "W1", impl: impl.rawValue, opsPerSecond: Double(rowCount) / seconds, seconds: seconds)
    }

    /// W1-sql: W1 through `execute(sql:arguments:)` with an array literal instead of records.
    func bulkInsertSQL(_ impl: Implementation) throws -> Measurement {
        let seconds = try harness.median(setUp: { try open(impl, workload: "w1") }) { target in
            try insert(into: target, rows: rowCount, perTransaction: rowCount, throughSQL: true)
        }
        return Measurement(workload: "W1-sql", impl: impl.rawValue, opsPerSecond: Double(rowCount) / seconds, seconds: seconds)
    }

    /// W2: `transactionCount` rows, one transaction each.
    func singleRowTransactions(_ impl: Implementation) throws -> Measurement {
        let seconds = try harness.median(setUp: { try open(impl, workload: "w2") }) { target in
            try insert(into: target, rows: transactionCount, perTransaction: 1)
        }
        return Measurement(
            workload: "W2", impl: impl.rawValue, opsPerSecond: Double(transactionCount) / seconds, seconds: seconds)
    }

    /// A fresh database for W1 or W2, opened and keyed untimed.
    ///
    /// Opening is W0's figure, and the two sides derive a passphrase's key differently (Coffer
    /// PBKDF2-HMAC-SHA512 with 256,000 rounds by default, SQLCipher 3 PBKDF2-HMAC-SHA1 with 64,000):
    /// timed, the derivation was most of what encrypted W1 and W2 spent over raw C. Closing, with its
    /// final checkpoint, stays timed on both sides.
    private enum WriteTarget {
        case raw(RawConnection)
        case coffer(Database)
    }

    private func open(_ impl: Implementation, workload: String) throws -> WriteTarget {
        let path = harness.freshPath(workload)
        switch impl {
        case .rawC, .rawCPlain:
            // Its initialiser reads the schema, which derives the key.
            return .raw(
                try RawConnection(
                    path: path, key: impl.rawKey, cacheKiB: harness.cacheKiB,
                    autoCheckpointPages: harness.rawAutoCheckpointPages))
        case .coffer, .cofferPlain:
            return .coffer(try Database(path: path, configuration: configuration(impl)))
        }
    }

    private func insert(into target: WriteTarget, rows: Int, perTransaction: Int, throughSQL: Bool = false) throws {
        switch target {
        case .raw(let connection):
            connection.exec(BenchRow.schema)
            let begin = try connection.prepare("BEGIN IMMEDIATE")
            let commit = try connection.prepare("COMMIT")
            let insert = try connection.prepare(BenchRow.insertSQL)
            var next = 0
            while next < rows {
                try connection.step(begin, expecting: SQLITE_DONE)
                sqlite3_reset(begin)
                for row in self.rows[next..<min(rows, next + perTransaction)] {
                    try row.insert(with: insert, on: connection)
                }
                next += perTransaction
                try connection.step(commit, expecting: SQLITE_DONE)
                sqlite3_reset(commit)
            }
            [begin, commit, insert].forEach { sqlite3_finalize($0) }
            connection.close()
        case .coffer(let database):
            try database.write { try $0.executeScript(BenchRow.schema) }
            var next = 0
            while next < rows {
                try database.write { db in
                    let range = next..<min(rows, next + perTransaction)
                    if throughSQL {
                        for row in self.rows[range] { try db.execute(sql: BenchRow.insertSQL, arguments: row.arguments) }
                    } else {
                        for var person in self.people[range] { try person.insert(db) }
                    }
                }
                next += perTransaction
            }
            try database.close()
        }
    }

    /// The raw-key spec a second connection opens with (derived untimed, as a layer would keep it).
    private func rawKeySpec(path: String) throws -> String {
        guard let salt = FileManager.default.contents(atPath: path)?.prefix(16) else { throw BenchError("no file") }
        let key = try DerivedKey.pbkdf2SHA1(passphrase: Self.passphrase, salt: Array(salt), rounds: 64000)
        return "x'" + key.map { String(format: "%02x", $0) }.joined() + "'"
    }
}

extension BenchRow {
    /// The row as Coffer statement arguments.
    var arguments: StatementArguments {
        [id, name, age, email, score, payload]
    }
}
