import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Page crypto with OpenSSL objects kept between pages (`CofferPageCache/page_crypto.c`): every page HMAC
/// and cipher of a Coffer connection goes through them rather than SQLCipher's own provider, and the bytes
/// are SQLCipher's — the `sqlcipher` shell reads what they wrote, they read what the shell wrote, and a
/// changed byte or a changed key is still caught. The decrypted-page cache is off here, so every page is
/// computed, none served.
final class PageCryptoTests: XCTestCase {
    override func setUp() {
        super.setUp()
        DecryptedPageCache.capacityKiB = 0
    }

    override func tearDown() {
        DecryptedPageCache.capacityKiB = 8 * 1024
        super.tearDown()
    }

    /// The page HMACs and ciphers computed while `body` ran: with kept objects, and by SQLCipher's provider.
    private func crypto(_ body: () throws -> Void) rethrows -> (kept: Int, provider: Int) {
        let before = DecryptedPageCache.cryptoCounts
        try body()
        let after = DecryptedPageCache.cryptoCounts
        return (after.kept - before.kept, after.provider - before.provider)
    }

    private let rows = 2_000

    private func body(_ id: Int) -> String { "row \(id) " + String(repeating: "é", count: id % 150) }

    func testPagesCofferWritesAreComputedWithKeptObjectsAndReadByTheShell() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("written.db")
        let counts = try crypto {
            let database = try Database(
                path: path, configuration: Configuration(encryption: .passphrase("pw"), cipher: .sqlcipher3))
            try database.write { db in
                try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
                for id in 0..<rows { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, body(id)]) }
            }
            try database.checkpoint(.truncate)
            try database.close()
        }
        // About 100 pages written to the WAL and read back by the checkpoint, each MACed and ciphered.
        XCTAssertGreaterThan(counts.kept, 200)
        XCTAssertEqual(counts.provider, 0)
        let expected = (0..<rows).map { body($0) }.joined(separator: "\n") + "\n"
        let shell = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", path],
            input: "PRAGMA key = 'pw';\nSELECT body FROM item ORDER BY id;\nPRAGMA integrity_check;\n")
        XCTAssertEqual(shell.stdout, expected + "ok\n", shell.stderr)
    }

    func testPagesTheShellWroteAreReadWithKeptObjectsAndAChangedByteFails() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("shell.db")
        try Shell.sqlcipher(
            path, key: "pw",
            """
            CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < \(rows - 1))
            INSERT INTO item SELECT i, 'shell ' || i || ' ' || substr(hex(zeroblob(200)), 1, i % 300) FROM n;
            """)
        let configuration = Configuration(
            encryption: .passphrase("pw"), cipher: CipherOptions(pageSize: 4096, keyDerivation: .sqlcipher3))
        var bodies: [String] = []
        let counts = try crypto {
            let database = try Database(path: path, configuration: configuration)
            bodies = try database.read { db in
                try db.fetchAll(sql: "SELECT body FROM item ORDER BY id").map { try $0.decode(String.self, at: 0) }
            }
            try database.close()
        }
        XCTAssertEqual(bodies, (0..<rows).map { "shell \($0) " + String(repeating: "0", count: $0 % 300) })
        XCTAssertGreaterThan(counts.kept, 100)
        XCTAssertEqual(counts.provider, 0)

        // One ciphertext byte of page 5 flipped: its kept-object HMAC no longer matches.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(4 * 4096 + 300))
        let byte = try XCTUnwrap(handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(4 * 4096 + 300))
        handle.write(Data([byte ^ 0x80]))
        try handle.close()
        let database = try Database(path: path, configuration: configuration)
        defer { try? database.close() }
        XCTAssertThrowsError(try database.read { try $0.fetchAll(sql: "SELECT body FROM item") }) { error in
            XCTAssertTrue((error as? CofferError)?.isCorruption == true, "\(error)")
        }
    }

    func testAChangedPassphraseReKeysTheKeptObjects() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("rekeyed.db")
        let counts = try crypto {
            var database = try Database(
                path: path, configuration: Configuration(encryption: .passphrase("old"), cipher: .sqlcipher3))
            try database.write { db in
                try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
                for id in 0..<rows { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, body(id)]) }
            }
            // The same connection goes on with the new keys: its kept contexts must follow.
            try database.changePassphrase(to: .passphrase("new"))
            try database.write { try $0.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [rows, "after"]) }
            XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }, rows + 1)
            try database.close()
            database = try Database(
                path: path, configuration: Configuration(encryption: .passphrase("new"), cipher: .sqlcipher3))
            let seventh = try database.read { try $0.fetchValue(String.self, sql: "SELECT body FROM item WHERE id = 7") }
            XCTAssertEqual(seventh, body(7))
            try database.close()
        }
        XCTAssertGreaterThan(counts.kept, 200)
        XCTAssertEqual(counts.provider, 0)
        let shell = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", path],
            input: "PRAGMA key = 'new';\nSELECT count(*), max(body = 'after') FROM item;\n")
        XCTAssertEqual(shell.stdout, "\(rows + 1)|1\n", shell.stderr)
        let old = try Shell.sqlcipher(path, passphrase: "old", "SELECT count(*) FROM item;")
        XCTAssertTrue(old.stderr.contains("not a database") || old.stderr.contains("encrypted"), old.stderr)
    }

    /// A backup file is keyed with `sqlite3_key` directly, not through Coffer's keying: its cipher contexts
    /// come from the same provider as every other connection's (the caching one, forwarding to
    /// SQLCipher's: the file's pages count as the provider's). Until 2026-12-01 the caching provider was
    /// SQLCipher's default only while Coffer keyed a connection, and a backup file keyed in that moment
    /// could get its two 3.4.1 contexts from different providers (a crash in CI: "free(): invalid
    /// pointer"); its pages then bypassed the wrapper and counted nowhere.
    func testABackupFileKeyedOutsideCofferUsesTheSameProvider() throws {
        // SQLCipher 4 gives a connection one provider context, so its wrapper is registered only while
        // Coffer keys one, and a backup file keeps SQLCipher's provider outright.
        try XCTSkipIf(
            TestedSQLCipher.isVersion4, TestedSQLCipher.only3("the caching provider stays the default on 3.4.1 only"))
        let directory = try TemporaryDirectory()
        let database = try Database(
            path: directory.path("app.db"), configuration: Configuration(encryption: .passphrase("pw"), cipher: .sqlcipher3))
        defer { try? database.close() }
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
            for id in 0..<rows { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, body(id)]) }
        }
        try database.checkpoint(.truncate)
        let pages = try XCTUnwrap(database.read { try $0.fetchValue(Int.self, sql: "PRAGMA page_count") })
        let backups = URL(fileURLWithPath: directory.path("backups"))
        let counts = try crypto { _ = try database.backup(to: backups, kind: .full) }
        // Each page read from the database (an HMAC and a decryption, kept objects) and written to the
        // backup file (an encryption and an HMAC, SQLCipher's provider through the wrapper).
        XCTAssertGreaterThanOrEqual(counts.kept, 2 * (pages - 1), "\(pages) pages read")
        XCTAssertGreaterThanOrEqual(counts.provider, 2 * (pages - 1), "\(pages) pages written")
    }

    /// Databases opened on one thread (each keyed through Coffer) while another takes backups (each file
    /// keyed with `sqlite3_key`): every connection's contexts come from one provider, nothing crashes, and
    /// every backup restores.
    func testDatabasesOpenedWhileBackupsAreKeyedStayConsistent() throws {
        let directory = try TemporaryDirectory()
        let configuration = Configuration(encryption: .passphrase("pw"), cipher: .sqlcipher3)
        let database = try Database(path: directory.path("app.db"), configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE TABLE item(id INTEGER PRIMARY KEY, body TEXT)")
            for id in 0..<200 { try db.execute(sql: "INSERT INTO item VALUES (?, ?)", arguments: [id, body(id)]) }
        }
        let other = directory.path("other.db")
        try Database(path: other, configuration: configuration).close()
        let backups = URL(fileURLWithPath: directory.path("backups"))
        let failures = Failures()
        let done = DispatchGroup()
        DispatchQueue.global().async(group: done) {
            do {
                for _ in 0..<150 { try Database(path: other, configuration: configuration).close() }
            } catch { failures.add(error) }
        }
        DispatchQueue.global().async(group: done) {
            do {
                for _ in 0..<40 { _ = try database.backup(to: backups, kind: .full) }
            } catch { failures.add(error) }
        }
        done.wait()
        XCTAssertEqual(failures.all.map { "\($0)" }, [])
        _ = try database.restore(fromLatestBackup: backups)
        let restored = try Database(path: directory.path("app.db"), configuration: configuration)
        defer { try? restored.close() }
        XCTAssertEqual(try restored.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM item") }, 200)
    }
}

/// Errors collected from several threads.
private final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var errors: [any Error] = []
    func add(_ error: any Error) { lock.withLock { errors.append(error) } }
    var all: [any Error] { lock.withLock { errors } }
}
