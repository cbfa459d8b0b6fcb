import CSQLCipher
import Coffer
import CofferTestSupport
import Foundation

/// W3 (fetch all rows), W4 (point lookups in one read), W4b (one read call per lookup), W5 (range
/// queries), on a table of `rowCount` rows filled once per implementation.
///
/// Every repetition opens fresh connections untimed (the page cache starts cold, the OS cache warm);
/// the timed part is the reads alone. Each implementation's checksum of the rows it decoded must match
/// the others', so no implementation can skip work.
struct ReadWorkloads {
    let harness: Harness
    let writes: WriteWorkloads
    let lookupCount: Int
    let perCallLookupCount: Int
    let rangeQueryCount: Int
    /// One filled database per encryption setting, made on first use.
    private let files: FileCache

    init(harness: Harness, writes: WriteWorkloads, lookupCount: Int, perCallLookupCount: Int, rangeQueryCount: Int) {
        self.harness = harness
        self.writes = writes
        self.lookupCount = lookupCount
        self.perCallLookupCount = perCallLookupCount
        self.rangeQueryCount = rangeQueryCount
        self.files = FileCache()
    }

    var rowCount: Int { writes.rowCount }

    /// The filled database `impl` reads: raw C and encrypted Coffer read the same encrypted file.
    func filledDatabase(_ impl: Implementation) throws -> String {
        let key = impl.isEncrypted ? "encrypted" : "plain"
        if let path = files.paths[key] { return path }
        let path = try writes.prepareDatabase(impl, rows: rowCount)
        files.paths[key] = path
        return path
    }

    /// Ids to look up, the same sequence for every implementation.
    static func lookupIDs(count: Int, rowCount: Int, seed: UInt64) -> [Int64] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in Int64.random(in: 1...Int64(rowCount), using: &generator) }
    }

    /// The `age BETWEEN lo AND hi` bounds of range query `index`: one age (about rowCount/60 rows, sorted
    /// by score, 50 kept).
    static func ageRange(_ index: Int) -> (Int64, Int64) {
        let low = Int64(18 + (index * 7) % 60)
        return (low, low)
    }

    // MARK: Raw C and Coffer sessions

    func openRaw(_ impl: Implementation) throws -> RawConnection {
        try RawConnection(path: try filledDatabase(impl), key: impl.rawKey, readOnly: true, cacheKiB: harness.cacheKiB)
    }

    /// An open database whose first reader is already connected (so no timed run pays for opening it).
    func openCoffer(_ impl: Implementation) throws -> Database {
        let database = try Database(path: try filledDatabase(impl), configuration: harness.configuration(impl))
        try database.read { _ in }
        return database
    }

    private func measure(
        _ workload: String, _ impl: Implementation, operations: Int, checksums: ChecksumLog,
        raw: (RawConnection) throws -> Int64, coffer: (Database) throws -> Int64
    ) throws -> Measurement {
        let seconds: Double
        switch impl {
        case .rawC, .rawCPlain:
            seconds = try harness.median(setUp: { try openRaw(impl) }) { connection in
                checksums.record(workload, impl, try raw(connection))
            }
        case .coffer, .cofferPlain:
            seconds = try harness.median(
                setUp: { try openCoffer(impl) },
                { database in
                    checksums.record(workload, impl, try coffer(database))
                }, tearDown: { try $0.close() })
        }
        return Measurement(workload: workload, impl: impl.rawValue, opsPerSecond: Double(operations) / seconds, seconds: seconds)
    }

    // MARK: Workloads

    /// W3: every row into an array of structs (Coffer: `@Table` record through `fetchAll`, Codable).
    func fetchAll(_ impl: Implementation, checksums: ChecksumLog) throws -> Measurement {
        try measure(
            "W3", impl, operations: rowCount, checksums: checksums,
            raw: { connection in
                let statement = try connection.prepare(BenchRow.selectAllSQL)
                defer { sqlite3_finalize(statement) }
                var rows: [BenchRow] = []
                try connection.inReadTransaction {
                    while sqlite3_step(statement) == SQLITE_ROW { rows.append(BenchRow(statement: statement)) }
                }
                var sum = Checksum()
                rows.forEach { sum.add($0) }
                return sum.value
            },
            coffer: { database in
                let people = try database.read { db in try Person.fetchAll(db) }
                var sum = Checksum()
                people.forEach { sum.add($0) }
                return sum.value
            })
    }

    /// W4: `lookupCount` primary-key lookups inside one read, each decoded into a struct (Coffer: a
    /// prepared query, rebound per lookup).
    func lookupsInOneRead(_ impl: Implementation, checksums: ChecksumLog) throws -> Measurement {
        let ids = Self.lookupIDs(count: lookupCount, rowCount: rowCount, seed: 4)
        return try measure(
            "W4", impl, operations: ids.count, checksums: checksums,
            raw: { connection in
                let statement = try connection.prepare(BenchRow.selectByIDSQL)
                defer { sqlite3_finalize(statement) }
                var sum = Checksum()
                try connection.inReadTransaction {
                    for id in ids {
                        sqlite3_bind_int64(statement, 1, id)
                        try connection.step(statement, expecting: SQLITE_ROW)
                        sum.add(BenchRow(statement: statement))
                        sqlite3_reset(statement)
                    }
                }
                return sum.value
            },
            coffer: { database in
                let byID = try CofferLookup.byID.get()
                return try database.read { db in
                    var sum = Checksum()
                    for id in ids {
                        guard let person = try byID.fetchOne(db, id) else { throw BenchError("no row \(id)") }
                        sum.add(person)
                    }
                    return sum.value
                }
            })
    }

    /// W4b: `perCallLookupCount` lookups, each a read of its own (raw C: one autocommit SELECT each;
    /// Coffer: `byID.fetchOne(database, id)`, one statement on a reader outside any transaction).
    /// W4b-read: the same lookups, each in a `database.read` closure (a snapshot transaction around it).
    func lookupsPerRead(_ impl: Implementation, inReadClosure: Bool, checksums: ChecksumLog) throws -> Measurement {
        let ids = Self.lookupIDs(count: perCallLookupCount, rowCount: rowCount, seed: 5)
        return try measure(
            inReadClosure ? "W4b-read" : "W4b", impl, operations: ids.count, checksums: checksums,
            raw: { connection in
                let statement = try connection.prepare(BenchRow.selectByIDSQL)
                defer { sqlite3_finalize(statement) }
                var sum = Checksum()
                for id in ids { sum.add(try RawLookup.row(id: id, statement: statement, connection: connection)) }
                return sum.value
            },
            coffer: { database in
                // The prepared query is taken out of its `Result` once, as raw C prepares its statement once.
                let byID = try CofferLookup.byID.get()
                var sum = Checksum()
                if inReadClosure {
                    for id in ids { sum.add(try CofferLookup.personInRead(id: id, byID: byID, in: database)) }
                } else {
                    for id in ids { sum.add(try CofferLookup.person(id: id, byID: byID, in: database)) }
                }
                return sum.value
            })
    }

    /// W5: `rangeQueryCount` × `age BETWEEN ? AND ? ORDER BY score LIMIT 50`, one read call each.
    func rangeQueries(_ impl: Implementation, checksums: ChecksumLog) throws -> Measurement {
        let count = rangeQueryCount
        return try measure(
            "W5", impl, operations: count, checksums: checksums,
            raw: { connection in
                let statement = try connection.prepare(BenchRow.rangeSQL)
                defer { sqlite3_finalize(statement) }
                var sum = Checksum()
                for index in 0..<count {
                    let (low, high) = Self.ageRange(index)
                    sqlite3_bind_int64(statement, 1, low)
                    sqlite3_bind_int64(statement, 2, high)
                    while sqlite3_step(statement) == SQLITE_ROW { sum.add(BenchRow(statement: statement)) }
                    sqlite3_reset(statement)
                }
                return sum.value
            },
            coffer: { database in
                var sum = Checksum()
                for index in 0..<count {
                    let (low, high) = Self.ageRange(index)
                    let people = try database.read { db in
                        try Person.filter { $0.age.between(low, and: high) }.order { $0.score.asc }.limit(50).fetchAll(db)
                    }
                    people.forEach { sum.add($0) }
                }
                return sum.value
            })
    }
}

/// One primary-key lookup in raw C, in its own (autocommit) read transaction.
enum RawLookup {
    static func row(id: Int64, statement: OpaquePointer, connection: RawConnection) throws -> BenchRow {
        sqlite3_bind_int64(statement, 1, id)
        defer { sqlite3_reset(statement) }
        try connection.step(statement, expecting: SQLITE_ROW)
        return BenchRow(statement: statement)
    }
}

/// Primary-key lookups through Coffer's public API, the way the README teaches a hot lookup: the query
/// is prepared once (rendered to SQL once), each call binds the id into the connection's compiled statement.
enum CofferLookup {
    static let byID = Result { try Person.filter { $0.id == .parameter }.prepared() }

    /// One lookup, a read of its own: one statement on a reader, outside any transaction.
    static func person(id: Int64, byID: PreparedQuery<Person>, in database: Database) throws -> Person {
        guard let person = try byID.fetchOne(database, id) else { throw BenchError("no row \(id)") }
        return person
    }

    /// One lookup in a `read` closure of its own (a snapshot transaction around the one statement).
    static func personInRead(id: Int64, byID: PreparedQuery<Person>, in database: Database) throws -> Person {
        guard let person = try database.read({ db in try byID.fetchOne(db, id) }) else {
            throw BenchError("no row \(id)")
        }
        return person
    }
}

/// The filled databases, by encryption setting (made once, reused by every read workload).
final class FileCache {
    var paths: [String: String] = [:]
}

/// Each implementation's checksum per workload: they must agree, or the run fails.
final class ChecksumLog {
    private var sums: [String: (Implementation, Int64)] = [:]
    private(set) var mismatches: [String] = []

    func record(_ workload: String, _ impl: Implementation, _ sum: Int64) {
        if let (first, expected) = sums[workload], expected != sum {
            mismatches.append("\(workload): \(impl.rawValue) read checksum \(sum), \(first.rawValue) read \(expected)")
        } else if sums[workload] == nil {
            sums[workload] = (impl, sum)
        }
    }
}
