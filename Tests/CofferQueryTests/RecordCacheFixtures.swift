import CofferTestSupport
import XCTest

@testable import Coffer
@testable import CofferBackup
@testable import CofferEngine
@testable import CofferRecords
@testable import CofferSearch
@testable import CofferStores

/// A type cached with the default `recent` level.
@Table("cached_contact") struct CachedContact: Codable, Equatable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
    var score: Int
}
extension CachedContact: CachedRecord {
    static var recordCache: RecordCacheLevel { .recent() }
}

/// A type kept whole (`all`).
@Table("resident_contact") struct ResidentContact: Codable, Equatable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}
extension ResidentContact: CachedRecord {
    static var recordCache: RecordCacheLevel { .all() }
}

/// A type whose cache holds a few kilobytes.
@Table("small_contact") struct SmallContact: Codable, Equatable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}
extension SmallContact: CachedRecord {
    static var recordCache: RecordCacheLevel { .recent(costLimit: 4_096) }
}

/// An uncached type.
@Table("plain_contact") struct PlainContact: Codable, Equatable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var name: String
}

/// A database on disk with the contact tables, `count` rows in each (ids 1…count, names "name <id>").
func makeContactDatabase(in directory: TemporaryDirectory, count: Int) throws -> Database {
    let database = try Database(path: directory.path("contacts.db"), configuration: contactConfiguration())
    try database.write { db in
        try db.upgradeSchema(for: [CachedContact.self, ResidentContact.self, SmallContact.self, PlainContact.self])
        for id in 1...Int64(count) {
            var contact = CachedContact(id: id, name: "name \(id)", score: 0)
            try contact.insert(db)
            var resident = ResidentContact(id: id, name: "name \(id)")
            try resident.insert(db)
            var small = SmallContact(id: id, name: "name \(id)")
            try small.insert(db)
            var plain = PlainContact(id: id, name: "name \(id)")
            try plain.insert(db)
        }
    }
    return database
}

/// SQLCipher 3's settings, so that the `sqlcipher` shell can write to the file too, and no idle TRUNCATE
/// checkpoint: it moves every reader's `data_version`, which empties the cache as another connection's
/// commit would, and the tests count the statements of cached lookups.
func contactConfiguration() -> Configuration {
    var configuration = Configuration(encryption: .passphrase("pw"), cipher: .sqlcipher3)
    configuration.idleCheckpointDelay = 3_600
    return configuration
}

/// The contact `id` read by SQL, never through the cache: what a cached read must equal.
func uncachedContact(_ db: Connection, id: Int64) throws -> CachedContact? {
    try CachedContact.filter { $0.id == id }.fetchOne(db)
}

/// Starts `database`'s record cache (the read that starts it is not cached) and fills it with `ids`.
func warmContacts(_ database: Database, ids: ClosedRange<Int64>) throws {
    for _ in 0..<2 {
        try database.read { db in for id in ids { _ = try CachedContact.fetchOne(db, id: id) } }
    }
}

/// What the database's record cache holds, by table.
func cacheUsage(_ database: Database) throws -> [String: (records: Int, cost: Int)] {
    try database.read { db in
        var usage: [String: (records: Int, cost: Int)] = [:]
        for entry in RecordCacheRegistry.of(db)?.usage ?? [] { usage[entry.table] = (entry.records, entry.cost) }
        return usage
    }
}
