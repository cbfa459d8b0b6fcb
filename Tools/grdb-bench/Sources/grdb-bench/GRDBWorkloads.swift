import Foundation
import GRDB

/// The benchmark row as an idiomatic GRDB record.
struct Person: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "person"
    var id: Int64
    var name: String
    var age: Int64
    var email: String
    var score: Double
    var payload: Data

    init(_ row: BenchRow) {
        (id, name, age, email, score, payload) = (row.id, row.name, row.age, row.email, row.score, row.payload)
    }

    func add(to sum: inout Checksum) { sum.add(id: id, age: age, score: score, name: name, email: email, payload: payload) }
}

/// W1–W6 with GRDB as its documentation teaches it: a `DatabasePool`, Codable records, the query interface.
struct GRDBWorkloads {
    let rows: [BenchRow]
    let cacheKiB: Int

    func openPool(_ path: String) throws -> DatabasePool {
        var configuration = Configuration()
        let cacheKiB = self.cacheKiB
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)")
            try db.execute(sql: "PRAGMA synchronous = NORMAL")
        }
        return try DatabasePool(path: path, configuration: configuration)
    }

    func insert(path: String, count: Int, perTransaction: Int) throws {
        let pool = try openPool(path)
        try pool.write { db in try db.execute(sql: BenchRow.schema) }
        try insert(rows[0..<count], perTransaction: perTransaction, pool: pool)
        try pool.close()
    }

    func insert(_ rows: ArraySlice<BenchRow>, perTransaction: Int, pool: DatabasePool) throws {
        for start in stride(from: rows.startIndex, to: rows.endIndex, by: perTransaction) {
            try pool.write { db in
                for row in rows[start..<min(rows.endIndex, start + perTransaction)] { try Person(row).insert(db) }
            }
        }
    }

    func fetchAll(_ pool: DatabasePool) throws -> Int64 {
        let people = try pool.read { db in try Person.fetchAll(db) }
        var sum = Checksum()
        people.forEach { $0.add(to: &sum) }
        return sum.value
    }

    func lookupsInOneRead(_ ids: [Int64], _ pool: DatabasePool) throws -> Int64 {
        try pool.read { db in
            var sum = Checksum()
            for id in ids {
                guard let person = try Person.fetchOne(db, key: id) else { throw BenchError("no row \(id)") }
                person.add(to: &sum)
            }
            return sum.value
        }
    }

    static func lookup(_ id: Int64, _ pool: DatabasePool) throws -> Person {
        guard let person = try pool.read({ db in try Person.fetchOne(db, key: id) }) else { throw BenchError("no row \(id)") }
        return person
    }

    func lookupsPerRead(_ ids: [Int64], _ pool: DatabasePool) throws -> Int64 {
        var sum = Checksum()
        for id in ids { try Self.lookup(id, pool).add(to: &sum) }
        return sum.value
    }

    func ranges(_ count: Int, _ pool: DatabasePool) throws -> Int64 {
        var sum = Checksum()
        for index in 0..<count {
            let (low, high) = BenchRow.ageRange(index)
            let people = try pool.read { db in
                try Person.filter((low...high).contains(Column("age"))).order(Column("score")).limit(50).fetchAll(db)
            }
            people.forEach { $0.add(to: &sum) }
        }
        return sum.value
    }
}
