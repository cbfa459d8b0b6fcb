import Coffer
import CofferTestSupport
import Foundation
import XCTest

struct Post: Codable, Equatable, Sendable {
    var title: String
    var publishedAt: Date
    static let publishedAt = KeyValueIndexField<Post, Date>("publishedAt") { $0.publishedAt }
}

/// A clock the test moves by hand (`KeyValueStore.Configuration.now`).
final class ManualClock: @unchecked Sendable {
    private let lock = NSLock()
    private var current = Date(timeIntervalSince1970: 1_700_000_000)
    var now: Date { lock.withLock { current } }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
}

/// KeyValue.md, Backups.md and Operations.md's command line (once the README's "Key-value stores",
/// "Backups" and "The `coffer` command line"), end to end.
final class PublicAPIStoreBackupTests: XCTestCase {
    func testKeyValueStorePutGetExpiryAndIndexQuery() throws {
        struct User: Codable, Sendable, Equatable {
            var id: Int
            var name: String
            var age: Int
        }
        let dir = try TemporaryDirectory()
        let database = try Database(path: dir.path("test.db"), configuration: .init(encryption: .passphrase("pw")))
        defer { try? database.close() }
        let store = try KeyValueStore(database: database, name: "user_table")
        try store.put(User(id: 1, name: "tangqiao", age: 30), for: "1")
        XCTAssertEqual(try store.value(User.self, for: "1"), User(id: 1, name: "tangqiao", age: 30))
        XCTAssertNil(try store.value(User.self, for: "2"))

        let clock = ManualClock()
        let posts = try KeyValueStore(
            database: database, name: "posts",
            configuration: .init(indexes: [Post.publishedAt], now: { clock.now }))
        let start = clock.now
        try posts.batch { batch in
            for index in 0..<30 {
                try batch.put(Post(title: "p\(index)", publishedAt: start + Double(index)), for: "p\(index)", in: "feed")
            }
        }
        try posts.put(Post(title: "brief", publishedAt: start + 100), for: "brief", in: "feed", expiry: .after(60))
        let newest = KeyValueQuery(bucket: "feed").filter(Post.publishedAt < start + 200)
            .order(by: Post.publishedAt.descending).limit(3)
        XCTAssertEqual(try posts.items(Post.self, matching: newest).map(\.key), ["brief", "p29", "p28"])
        let item = try XCTUnwrap(try posts.item(Post.self, for: "brief", in: "feed"))
        XCTAssertEqual(item.expiresAt, start + 60)
        clock.advance(61)
        XCTAssertNil(try posts.value(Post.self, for: "brief", in: "feed"), "expired items are invisible at once")
        XCTAssertEqual(try posts.keys(matching: newest), ["p29", "p28", "p27"])
        XCTAssertEqual(try posts.purgeExpired(), 1)
        XCTAssertEqual(try posts.count(matching: KeyValueQuery(bucket: "feed")), 30)
        XCTAssertEqual(try posts.delete(keysWithPrefix: "p1", in: "feed"), 11)
    }

    func testBackupIncrementalAndRestore() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("app.db")
        let backups = dir.url.appendingPathComponent("backups")
        let configuration = Configuration(encryption: .passphrase("pw"))
        let database = try Database(path: path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x TEXT)")
            for index in 0..<500 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: ["row \(index)"]) }
        }
        let full = try database.backup(to: backups)
        try database.write { db in
            for index in 500..<600 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: ["row \(index)"]) }
        }
        let second = try database.backup(to: backups)
        XCTAssertEqual(full.kind, .full)
        XCTAssertEqual(second.kind, .incremental, ".automatic picks incremental when a base exists")
        XCTAssertEqual(try Database.backupGenerations(in: backups).count, 2)

        let copy = dir.path("restored.db")
        try Database.restore(from: backups, to: copy, configuration: configuration)
        let restored = try Database(path: copy, configuration: configuration)
        XCTAssertEqual(try restored.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 600)
        try restored.close()
        do {
            try Database.restore(from: backups, to: copy, configuration: configuration)
            XCTFail("restore overwrote an existing file")
        } catch CofferError.cantOpen {
        }

        try database.write { try $0.execute(sql: "DELETE FROM t") }
        try database.restore(fromLatestBackup: backups)
        let reopened = try Database(path: path, configuration: configuration)
        XCTAssertEqual(try reopened.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 600)
        try reopened.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: backups.path) {
            XCTAssertFalse(FileScan.file(backups.appendingPathComponent(name).path, contains: "row 42"), "plaintext in \(name)")
        }
    }

    func testCommandLineInfoAndVerify() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("cli.db")
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("cli secret")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            try db.execute(sql: "INSERT INTO t VALUES (1), (2)")
        }
        try database.close()
        let keyFile = dir.path("key")
        try "cli secret\n".write(toFile: keyFile, atomically: true, encoding: .utf8)
        let coffer = Shell.cofferExecutable

        let info = try Shell.run(coffer, ["info", path, "--json", "--passphrase-file", keyFile])
        XCTAssertEqual(info.status, 0, info.stderr)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any])
        XCTAssertEqual(json["encrypted"] as? Bool, true)
        XCTAssertEqual(json["page_size"] as? Int, 4096)
        let tables = try XCTUnwrap(json["tables"] as? [[String: Any]])
        XCTAssertEqual(tables.first { $0["name"] as? String == "t" }?["rows"] as? Int, 2)

        let verify = try Shell.run(
            coffer, ["verify", path, "--passphrase-env", "PUBLIC_API_KEY"], environment: ["PUBLIC_API_KEY": "cli secret"])
        XCTAssertEqual(verify.status, 0, verify.stdout + verify.stderr)
        let wrong = try Shell.run(coffer, ["verify", path, "--passphrase-env", "K"], environment: ["K": "nope"])
        XCTAssertEqual(wrong.status, 3, "exit 3: wrong passphrase")
        XCTAssertEqual(try Shell.run(coffer, ["info"]).status, 2, "exit 2: usage error")
    }
}
