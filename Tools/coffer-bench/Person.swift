import Coffer
import Foundation

/// The benchmark's row as a `@Table` record: what the `coffer` implementation reads through the typed
/// query interface and the Codable decoder.
@Table("person")
struct Person: Codable, Sendable {
    @Column(primaryKey: true) var id: Int64
    var name: String
    var age: Int64
    var email: String
    var score: Double
    var payload: Data
}

extension Person {
    /// The record holding `row`'s values.
    init(_ row: BenchRow) {
        self.init(id: row.id, name: row.name, age: row.age, email: row.email, score: row.score, payload: row.payload)
    }
}

/// Adds each decoded row's fields into a checksum, so that no implementation can skip reading a column
/// and all three can be checked to have read the same rows.
struct Checksum {
    private(set) var value: Int64 = 0

    mutating func add(id: Int64, age: Int64, score: Double, nameBytes: Int, emailBytes: Int, payload: Data) {
        value &+= id &+ age &+ Int64(score * 10) &+ Int64(nameBytes) &+ Int64(emailBytes)
        value &+= Int64(payload.count) &+ Int64(payload.first ?? 0)
    }

    mutating func add(_ person: Person) {
        add(
            id: person.id, age: person.age, score: person.score, nameBytes: person.name.utf8.count,
            emailBytes: person.email.utf8.count, payload: person.payload)
    }

    mutating func add(_ row: BenchRow) {
        add(
            id: row.id, age: row.age, score: row.score, nameBytes: row.name.utf8.count,
            emailBytes: row.email.utf8.count, payload: row.payload)
    }
}
