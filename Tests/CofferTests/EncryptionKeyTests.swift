import Coffer
import CofferTestSupport
import Foundation
import XCTest

final class EncryptionKeyTests: XCTestCase {
    func testWrongPassphraseFailsAtOpenAndLeavesFileUntouched() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("db.sqlite")
        do {
            let db = try Database(path: path, configuration: Configuration(encryption: .passphrase("right")))
            try db.write { db in
                try db.execute(sql: "CREATE TABLE t(x)")
                try db.execute(sql: "INSERT INTO t VALUES (1)")
            }
            try db.close()
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("wrong")))) { error in
            guard case CofferError.wrongPassphrase = error else { return XCTFail("expected wrongPassphrase, got \(error)") }
            XCTAssertTrue("\(error)".contains("wrong passphrase"))
        }
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
    }

    func testRawKeyAndPassphraseBytesOpenTheirFiles() throws {
        let dir = try TemporaryDirectory()
        let key = Data((0..<32).map { UInt8($0 * 7 & 0xff) })
        for (name, encryption) in [("raw", Encryption.rawKey(key)), ("bytes", .passphraseData(Data([0, 255, 1, 254])))] {
            let path = dir.path("\(name).db")
            try Database(path: path, configuration: Configuration(encryption: encryption))
                .write { try $0.execute(sql: "CREATE TABLE t(x)") }
            let reopened = try Database(path: path, configuration: Configuration(encryption: encryption))
            XCTAssertEqual(try reopened.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM sqlite_master") }, 1)
        }
        XCTAssertThrowsError(
            try Database(path: dir.path("short.db"), configuration: Configuration(encryption: .rawKey(Data([1, 2]))))
        ) {
            guard case CofferError.invalidConfiguration = $0 else { return XCTFail("\($0)") }
        }
    }

    func testSecretsNeverAppearInDescriptions() throws {
        let dir = try TemporaryDirectory()
        let database = try Database(
            path: dir.path("s.db"), configuration: Configuration(encryption: .passphrase("hunter2-secret")))
        guard case .passphrase(let kept) = database.configuration.encryption else { return XCTFail("encryption kind lost") }
        XCTAssertEqual(kept, "", "the database keeps the derived key, not the passphrase")
        let configuration = Configuration(encryption: .passphrase("hunter2-secret"))
        XCTAssertFalse(String(describing: configuration.encryption).contains("hunter2"))
        XCTAssertFalse(String(reflecting: configuration.encryption).contains("hunter2"))
        XCTAssertFalse(String(describing: configuration).contains("hunter2"))
        XCTAssertFalse(String(reflecting: configuration).contains("hunter2"))
    }

    func testChangePassphraseOnLiveDatabase() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("rekey.db")
        let db = try Database(path: path, configuration: Configuration(encryption: .passphrase("old")))
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t(x)")
            for i in 0..<500 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [i]) }
        }
        // Readers were open before the rekey: they must be reopened with the new key.
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 500)
        try db.changePassphrase(to: .passphrase("new"))
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 500)
        try db.write { try $0.execute(sql: "INSERT INTO t VALUES (500)") }
        try db.close()

        XCTAssertThrowsError(try Database(path: path, configuration: Configuration(encryption: .passphrase("old")))) {
            guard case CofferError.wrongPassphrase = $0 else { return XCTFail("\($0)") }
        }
        let reopened = try Database(path: path, configuration: Configuration(encryption: .passphrase("new")))
        XCTAssertEqual(try reopened.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 501)
        // The independent client agrees.
        let shell = try Shell.sqlcipher(
            path, passphrase: ShellRawKey.spec(passphrase: "new", path: path), "SELECT count(*) FROM t;")
        XCTAssertEqual(shell.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "501")
    }

    func testNoPlaintextOnDisk() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("marker.db")
        let marker = "COFFER-PLAINTEXT-MARKER-7f3a9c"
        var configuration = Configuration(encryption: .passphrase("pw"))
        configuration.idleCheckpointDelay = 3600
        let db = try Database(path: path, configuration: configuration)
        try db.write { db in
            try db.execute(sql: "CREATE TABLE t(x TEXT)")
            try db.execute(sql: "CREATE INDEX t_x ON t(x)")
            for i in 0..<200 { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: ["\(marker)-\(i)"]) }
        }
        // Sort through a temp b-tree too (temp_store is memory, so nothing may spill to disk).
        _ = try db.read { try $0.fetchAll(sql: "SELECT x FROM t ORDER BY x || '' DESC") }
        // Check while the WAL and shared memory files are live, then after close.
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertFalse(FileScan.file(path + suffix, contains: marker), "marker found in \(suffix)")
            XCTAssertFalse(FileScan.file(path + suffix, contains: "SQLite format 3"), "plaintext header in \(suffix)")
        }
        XCTAssertGreaterThan(FileScan.size(path + "-wal"), 0)
        try db.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: dir.url.path) {
            XCTAssertFalse(FileScan.file(dir.path(name), contains: marker), "marker found in \(name)")
        }
    }

    func testEncryptPlaintextFileAndExportBack() throws {
        let dir = try TemporaryDirectory()
        let plain = dir.path("plain.db")
        let encrypted = dir.path("encrypted.db")
        let exported = dir.path("exported.db")
        let source = try Database(path: plain)
        try source.write { db in
            try db.execute(sql: "CREATE TABLE t(x TEXT)")
            try db.execute(sql: "INSERT INTO t VALUES ('secret-row')")
            try db.execute(sql: "PRAGMA user_version = 42")
        }
        try source.close()

        try Database.encrypt(plaintextAt: plain, to: encrypted, encryption: .passphrase("pw"))
        XCTAssertFalse(FileScan.file(encrypted, contains: "secret-row"))
        let db = try Database(path: encrypted, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(try db.read { try $0.fetchValue(String.self, sql: "SELECT x FROM t") }, "secret-row")
        XCTAssertEqual(try db.read { try $0.fetchValue(Int.self, sql: "PRAGMA user_version") }, 42)
        let shell = try Shell.sqlcipher(
            encrypted, passphrase: ShellRawKey.spec(passphrase: "pw", path: encrypted), "SELECT x FROM t;")
        XCTAssertEqual(shell.stdout.trimmingCharacters(in: .whitespacesAndNewlines), "secret-row")

        try db.exportPlaintext(to: exported)
        let back = try Database(path: exported)
        XCTAssertEqual(try back.read { try $0.fetchValue(String.self, sql: "SELECT x FROM t") }, "secret-row")
        XCTAssertEqual(try back.read { try $0.fetchValue(Int.self, sql: "PRAGMA user_version") }, 42)
        XCTAssertThrowsError(try Database.encrypt(plaintextAt: plain, to: encrypted, encryption: .passphrase("pw")))
    }

    func testTemporaryDatabaseIsRemovedOnClose() throws {
        let db = try Database.temporary()
        try db.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        XCTAssertTrue(FileManager.default.fileExists(atPath: db.path))
        try db.close()
        XCTAssertFalse(FileManager.default.fileExists(atPath: db.path))

        let memory = try Database.inMemory()
        try memory.write { try $0.execute(sql: "CREATE TABLE t(x)") }
        XCTAssertEqual(try memory.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 0)
    }
}
