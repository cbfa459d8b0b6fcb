import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Coffer.md's and EncryptionAndKeys.md's opening, reading, writing, encryption and errors (once the README's
/// "Open, write, read", "Encryption" and "Errors"), as a user writes them.
final class PublicAPIDatabaseTests: XCTestCase {
    private let passphrase = "correct horse battery staple"

    func testOpenWriteReadAndSavepoints() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(
            path: dir.path("app.db"), configuration: Configuration(encryption: .passphrase(passphrase)))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE IF NOT EXISTS note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["hello"])
        }
        let notes = try database.read { db in try db.fetchAll(sql: "SELECT id, text FROM note ORDER BY id") }
        let first: String? = notes.first?["text"]
        XCTAssertEqual(first, "hello")

        // A throwing write closure rolls back; a throwing savepoint rolls back only its own work.
        struct Abandon: Error {}
        XCTAssertThrowsError(
            try database.write { db in
                try db.execute(sql: "INSERT INTO note(text) VALUES ('lost')")
                throw Abandon()
            })
        try database.write { db in
            try db.execute(sql: "INSERT INTO note(text) VALUES ('kept')")
            XCTAssertThrowsError(
                try db.savepoint {
                    try db.execute(sql: "INSERT INTO note(text) VALUES ('inner')")
                    throw Abandon()
                })
        }
        try database.writeWithoutTransaction { db in try db.execute(sql: "VACUUM") }
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }, 2)
        try database.close()
    }

    /// In an async context the async twins are the ones Swift picks: `try await database.read { … }`.
    func testAsyncTwinsUnderManyConcurrentTasks() async throws {
        let database = try Database.temporary()
        try await database.write { db in
            try db.execute(sql: "CREATE TABLE note(id INTEGER PRIMARY KEY, text TEXT NOT NULL)")
            try db.execute(sql: "INSERT INTO note(text) VALUES ('a'), ('b')")
        }
        let count = try await database.read { db in try db.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(count, 2)
        // Many concurrent tasks: writes serialize, reads see whole transactions.
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<40 {
                group.addTask {
                    if task.isMultiple(of: 2) {
                        try await database.write { db in
                            try db.execute(sql: "INSERT INTO note(text) VALUES (?)", arguments: ["task \(task)"])
                        }
                    } else {
                        let seen = try await database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
                        XCTAssertGreaterThanOrEqual(seen ?? 0, 2)
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = try await database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM note") }
        XCTAssertEqual(total, 22)
        try database.close()
    }

    func testEncryptionWrongPassphraseAndNoPlaintextOnDisk() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("secret.db")
        let marker = "PUBLIC-API-PLAINTEXT-MARKER"
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase(passphrase)))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE secret(text TEXT)")
            for index in 0..<100 { try db.execute(sql: "INSERT INTO secret VALUES (?)", arguments: ["\(marker) \(index)"]) }
        }
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileScan.file(path + suffix, contains: marker), "plaintext in \(suffix) while open")
        }
        try database.close()
        XCTAssertFalse(FileScan.file(path, contains: marker))
        XCTAssertFalse(FileScan.file(path, contains: "SQLite format 3"))

        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try Database(path: path, configuration: Configuration(encryption: .passphrase("wrong")))
            XCTFail("a wrong passphrase opened the database")
        } catch CofferError.wrongPassphrase {
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before, "a refused open wrote to the file")

        // The independent SQLCipher shell reads it with the key EncryptionAndKeys.md documents (PBKDF2-HMAC-SHA512,
        // 256,000 rounds, over the file's salt), derived here without Coffer.
        let rawKey = try ShellRawKey.spec(passphrase: passphrase, path: path)
        let shell = try Shell.sqlcipher(path, passphrase: rawKey, "SELECT count(*) FROM secret;")
        XCTAssertEqual(shell.stdout, "100\n", shell.stderr)
    }

    func testEncryptAndExportPlaintextCopies() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("legacy.db")
        try Shell.run("sqlite3", plain, "CREATE TABLE t(x); INSERT INTO t VALUES ('legacy row'); PRAGMA user_version = 7;")
        let secure = dir.path("secure.db")
        try Database.encrypt(plaintextAt: plain, to: secure, encryption: .passphrase("pw"))
        XCTAssertFalse(FileScan.file(secure, contains: "legacy row"))
        let database = try Database(path: secure, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "PRAGMA user_version") }, 7)
        let exported = dir.path("exported.db")
        try database.exportPlaintext(to: exported)
        try database.close()
        XCTAssertEqual(try Shell.run("sqlite3", exported, "SELECT x FROM t; PRAGMA user_version;"), "legacy row\n7\n")
    }

    func testOnCorruptionFiresOnceForADamagedPage() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("damaged.db")
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x TEXT)")
            for index in 0..<400 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: ["row \(index) of many"]) }
        }
        try database.close()
        // Overwrite the middle of the last page with noise.
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        let size = try handle.seekToEnd()
        try handle.seek(toOffset: size - 2048)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 512))
        try handle.close()

        let events = Failures()
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.onCorruption = { event in events.append(event.path) }
        let reopened = try Database(path: path, configuration: configuration)
        for _ in 0..<2 {
            XCTAssertThrowsError(try reopened.read { try $0.fetchAll(sql: "SELECT * FROM t") }) { error in
                XCTAssertTrue((error as? CofferError)?.isCorruption ?? false, "\(error)")
            }
        }
        XCTAssertEqual(events.all, [path], "called once, with the path")
        try reopened.close()
    }

    func testChangePassphraseWhileThreadsRead() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("rekey.db")
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("old")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            try db.execute(sql: "INSERT INTO t VALUES (1), (2), (3)")
        }
        let failures = Failures()
        let group = DispatchGroup()
        let stop = Failures()
        for _ in 0..<4 {
            DispatchQueue.global().async(group: group) {
                while stop.isEmpty {
                    do {
                        let count = try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }
                        if count != 3 { failures.append("saw \(String(describing: count)) rows") }
                    } catch {
                        failures.append("\(error)")
                    }
                }
            }
        }
        for round in 0..<5 { try database.changePassphrase(to: .passphrase("new \(round)")) }
        stop.append("stop")
        group.wait()
        XCTAssertEqual(failures.all, [])
        try database.close()
        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("old"))))
        let reopened = try Database(path: path, configuration: Configuration(encryption: .passphrase("new 4")))
        XCTAssertEqual(try reopened.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 3)
        try reopened.close()
    }

    func testErrorsMatchByFamilyOrExactly() throws {
        let database = try Database.temporary()
        try database.write { db in try db.execute(sql: "CREATE TABLE user(email TEXT UNIQUE)") }
        let email = "a@example.com"
        try database.write { try $0.execute(sql: "INSERT INTO user(email) VALUES (?)", arguments: [email]) }
        var matched = "none"
        do {
            try database.write { try $0.execute(sql: "INSERT INTO user(email) VALUES (?)", arguments: [email]) }
        } catch CofferError.constraint {
            matched = "constraint"
        } catch let error as CofferError where error.code == .busy {
            matched = "busy"
        }
        XCTAssertEqual(matched, "constraint")
        do {
            try database.write { try $0.execute(sql: "INSERT INTO user(email) VALUES (?)", arguments: [email]) }
        } catch let error as CofferError {
            XCTAssertEqual(error.code, .constraintUnique)
            XCTAssertFalse(error.description.contains(email), "an error must not carry bound values")
        }
        // A write inside a write is refused rather than deadlocking.
        XCTAssertThrowsError(try database.write { _ in try database.write { _ in } }) { error in
            guard case CofferError.apiMisuse = error else { return XCTFail("\(error)") }
        }
        try database.close()
    }
}

/// A thread-safe list of strings (failures seen by reader threads, or a stop flag).
final class Failures: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    func append(_ item: String) { lock.withLock { items.append(item) } }
    var all: [String] { lock.withLock { items } }
    var isEmpty: Bool { lock.withLock { items.isEmpty } }
}
