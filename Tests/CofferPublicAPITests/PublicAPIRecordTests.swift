import Coffer
import CofferTestSupport
import Foundation
import XCTest

@Table("account") struct Account: Codable, Equatable, Sendable {
    enum Tier: String, Codable, Sendable { case free, paid }
    struct Settings: Codable, Equatable, Sendable {
        var theme: String
        var tags: [String]
    }

    @Column(primaryKey: true) var id: Int64?
    @Column(unique: true) var email: String
    var name: String
    var tier: Tier
    var joined: Date
    var token: UUID
    var homepage: URL?
    var settings: Settings
    @Column(default: 0) var visits: Int

    static var indexes: [TableIndex<Account>] { [TableIndex(columns.name)] }
}

@Table("entry") struct Entry: Codable, Equatable, Sendable {
    @Column(primaryKey: true) var id: Int64?
    var accountID: Int64
    var text: String
}

/// QueriesAndRecords.md (once the README's "Tables and queries"): records, queries, prepared queries, writes, migrations.
final class PublicAPIRecordTests: XCTestCase {
    private func account(_ email: String, _ name: String, tier: Account.Tier = .free) -> Account {
        Account(
            id: nil, email: email, name: name, tier: tier, joined: Date(timeIntervalSince1970: 1_700_000_000.5),
            token: UUID(), homepage: URL(string: "https://example.com/\(name)"),
            settings: .init(theme: "dark", tags: [name, "x"]), visits: 0)
    }

    func testRecordsQueriesAndWrites() throws {
        let database = try Database.temporary()
        defer { try? database.close() }
        var migrator = Migrator()
        migrator.register("v1") { db in try db.upgradeSchema(for: [Account.self, Entry.self]) }
        XCTAssertEqual(try migrator.migrate(database), ["v1"])
        XCTAssertEqual(try migrator.migrate(database), [], "each migration runs once")

        try database.write { db in
            var ann = account("ann@example.com", "Ann", tier: .paid)
            try ann.insert(db)
            let annID = try XCTUnwrap(ann.id)
            try Account.insertAll([account("bob@example.com", "Bob"), account("cy@example.com", "Cy")], db)
            try Entry.insertAll((0..<30).map { Entry(id: nil, accountID: annID, text: "entry \($0)\0tail") }, db)
            var again = account("ann@example.com", "Ann B.")
            try again.upsert(db) { [$0.email] }
            XCTAssertEqual(again.id, annID, "upsert updated the existing row")
            _ = try Account.filter { $0.email == "bob@example.com" }.updateAll(db) { [$0.visits.set(to: $0.visits + 5)] }
        }
        try database.read { db in
            let all = try Account.order { $0.id.asc }.fetchAll(db)
            XCTAssertEqual(all.map(\.name), ["Ann B.", "Bob", "Cy"])
            XCTAssertEqual(all[0].settings, .init(theme: "dark", tags: ["Ann B.", "x"]))
            XCTAssertEqual(all[0].joined, Date(timeIntervalSince1970: 1_700_000_000.5))
            XCTAssertEqual(try Account.filter { $0.visits > 0 }.select { $0.name }.fetchAll(db), ["Bob"])
            XCTAssertEqual(try Account.filter { $0.name.hasPrefix("c") }.fetchCount(db), 1, "LIKE ignores ASCII case")
            XCTAssertEqual(try Entry.filter { $0.text.contains("1\0t") }.fetchCount(db), 3, "entries 1, 11, 21")
            XCTAssertEqual(try Entry.filter(sql: "length(CAST(text AS BLOB)) > \(12)").fetchCount(db), 20)
            XCTAssertEqual(try Account.select { $0.visits.sum() }.fetchOne(db), 5)
            let pairs = try Entry.join(Account.self) { $0.accountID == $1.id }.limit(2).fetchAll(db)
            XCTAssertEqual(pairs.map(\.1.email), ["ann@example.com", "ann@example.com"])
            var seen = 0
            try Entry.order { $0.id.asc }.cursor(db).forEach { _ in seen += 1 }
            XCTAssertEqual(seen, 30)
            let name = "Cy"
            XCTAssertEqual(try db.fetchAll(Account.self, SQL("SELECT * FROM account WHERE name = \(name)")).count, 1)
            XCTAssertEqual(try db.fetchValue(Int.self, SQL("SELECT count(*) FROM \(identifier: "entry")")), 30)
        }
        var duplicate = account("ann@example.com", "dup")
        XCTAssertThrowsError(try database.write { db in try duplicate.insert(db) }) { error in
            guard case CofferError.constraint = error else { return XCTFail("\(error)") }
        }
    }

    func testPreparedQueriesAcrossThreads() throws {
        let database = try Database.temporary()
        defer { try? database.close() }
        try database.write { db in
            try db.upgradeSchema(for: [Entry.self])
            try Entry.insertAll((1...200).map { Entry(id: nil, accountID: Int64($0 % 7), text: "e\($0)") }, db)
        }
        let byAccount = try Entry.filter { $0.accountID == .parameter }.order { $0.id.asc }.prepared()
        let byID = try Entry.filter { $0.id == .parameter }.prepared()
        let failures = Failures()
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            do {
                try database.read { db in
                    for id in Int64(1)...200 where id % 8 == Int64(thread) {
                        if try byID.fetchOne(db, id)?.text != "e\(id)" { failures.append("id \(id)") }
                    }
                    let rows = try byAccount.fetchAll(db, Int64(thread % 7))
                    if rows.isEmpty || rows.contains(where: { $0.accountID != Int64(thread % 7) }) {
                        failures.append("account \(thread % 7)")
                    }
                }
            } catch {
                failures.append("\(error)")
            }
        }
        XCTAssertEqual(failures.all, [])
        XCTAssertThrowsError(try database.read { try byID.fetchAll($0, arguments: [1, 2]) }) { error in
            guard case CofferError.range = error else { return XCTFail("\(error)") }
        }
    }

    func testSchemaUpgradeAndRebuildThroughMigrations() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("migrate.db")
        let configuration = Configuration(encryption: .passphrase("pw"))
        let first = try Database(path: path, configuration: configuration)
        try first.write { db in
            try db.execute(sql: "CREATE TABLE entry(id INTEGER PRIMARY KEY, accountID INTEGER NOT NULL, old TEXT)")
            try db.execute(sql: "INSERT INTO entry(accountID, old) VALUES (1, 'kept')")
        }
        try first.close()

        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        var migrator = Migrator()
        migrator.register("rename old to text") { db in
            try db.rebuildTable(Entry.self, renamedColumns: [(Entry.columns.text, from: "old")])
        }
        try migrator.migrate(database)
        XCTAssertEqual(try database.read { try Entry.fetchAll($0) }, [Entry(id: 1, accountID: 1, text: "kept")])
    }
}
