import Coffer
import CofferTestSupport
import Foundation
import XCTest

/// Coffer built against SQLCipher 4 (Tools/test-sqlcipher4.sh): it writes its own format (SQLCipher 3's pages,
/// HMAC-SHA1, keys derived by Coffer), so files move both ways with Debian's SQLCipher 3.4.1; it opens the
/// files SQLCipher 4 apps write with their defaults; its decrypted-page cache and page crypto wrap SQLCipher
/// 4's provider. The other library's shell is the independent check each time. Skipped on SQLCipher 3.4.1,
/// where the first and last hold by construction and KeyDerivationDefaultTests checks that SQLCipher 4 files
/// are refused.
final class SQLCipher4Tests: XCTestCase {
    override func setUpWithError() throws {
        try XCTSkipIf(!TestedSQLCipher.isVersion4, TestedSQLCipher.only4("Coffer built against SQLCipher 4"))
    }

    /// SQLCipher 4's shell: $COFFER_SQLCIPHER4_SHELL, else /opt/sqlcipher4/bin/sqlcipher4 (install.sh's default).
    private func sqlcipher4Shell() throws -> String {
        let candidates = [
            ProcessInfo.processInfo.environment["COFFER_SQLCIPHER4_SHELL"], "/opt/sqlcipher4/bin/sqlcipher4",
        ].compactMap { $0 }
        return try XCTUnwrap(
            candidates.first { FileManager.default.isExecutableFile(atPath: $0) },
            "no sqlcipher4 shell: set COFFER_SQLCIPHER4_SHELL (tried \(candidates))")
    }

    /// Runs `sql` in the `sqlcipher4` shell on `path`, stopping at the first error; its standard output.
    private func sqlcipher4(_ path: String, _ sql: String) throws -> String {
        let result = try Shell.run(try sqlcipher4Shell(), ["-batch", "-bail", path], input: sql)
        XCTAssertEqual(result.status, 0, result.stderr)
        return result.stdout
    }

    /// The decrypted-page cache wraps SQLCipher 4's provider too: reads hit it while the writer commits.
    func testTheDecryptedPageCacheServesReadsOnSQLCipher4() throws {
        let capacity = DecryptedPageCache.capacityKiB
        defer { DecryptedPageCache.capacityKiB = capacity }
        DecryptedPageCache.capacityKiB = 8 * 1024
        XCTAssertEqual(DecryptedPageCache.capacityKiB, 8 * 1024)
        let before = DecryptedPageCache.counts
        let directory = try TemporaryDirectory()
        let database = try Database(
            path: directory.path("cache.db"), configuration: Configuration(encryption: .passphrase("pw")))
        try database.write { db in
            try db.execute(sql: "CREATE TABLE t(x, pad)")
            for i in 0..<500 { try db.execute(sql: "INSERT INTO t VALUES (?, zeroblob(500))", arguments: [i]) }
        }
        for _ in 0..<5 {
            try database.write { try $0.execute(sql: "INSERT INTO t VALUES (-1, NULL)") }
            XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT sum(x >= 0) FROM t") }, 500)
        }
        XCTAssertGreaterThan(DecryptedPageCache.counts.hits, before.hits, "pages read again after a commit")
        XCTAssertGreaterThan(DecryptedPageCache.usage.pages, 0)
        try database.close()
        // The wipe when the last keyed connection closes is DecryptedPageCacheMemoryTests' (it runs on both
        // libraries); here other tests' databases may still be open in the same process.
    }

    /// What Coffer writes on SQLCipher 4 is Coffer's format: Debian's `sqlcipher` 3.4.1 shell reads it with
    /// the raw key Coffer derives (PBKDF2-HMAC-SHA512 256,000 over the file's salt) at 4096-byte pages, and
    /// writes to it that Coffer on SQLCipher 4 then reads.
    func testCofferFilesMoveBothWaysWithSQLCipher341() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("coffer.db")
        var database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        try database.write { db in
            try db.executeScript("CREATE TABLE item(id INTEGER PRIMARY KEY, label TEXT); INSERT INTO item(label) VALUES ('a');")
        }
        try database.checkpoint(.truncate)
        try database.close()
        // Header byte 20 of the decrypted page 1 is the reserve: SQLCipher 3's 48, not SQLCipher 4's 80.
        let spec = try ShellRawKey.spec(passphrase: "pw", path: path)
        let shell = try Shell.sqlcipher(
            path, passphrase: spec, "SELECT label FROM item; INSERT INTO item(label) VALUES ('b'); PRAGMA integrity_check;")
        XCTAssertEqual(shell.stdout, "a\nok\n", shell.stderr)
        database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(
            try database.read { try $0.fetchAll(sql: "SELECT label FROM item ORDER BY id").map { $0["label"] as String? } },
            ["a", "b"])
        try database.close()
        // SQLCipher 4's shell reads it only when told SQLCipher 3's page format.
        let v4 = try sqlcipher4(
            path,
            "PRAGMA key = \"\(spec)\";\nPRAGMA cipher_compatibility = 3;\nPRAGMA cipher_page_size = 4096;\nSELECT count(*) FROM item;\n"
        )
        XCTAssertEqual(v4, "ok\n2\n")  // SQLCipher 4 answers `PRAGMA key` with "ok"
    }

    /// A file SQLCipher 3.4.1 writes as Coffer on 3.4.1 does (raw key and salt given as `x'<key><salt>'`,
    /// 4096-byte pages) opens with the passphrase in Coffer on SQLCipher 4, by the same derivation.
    func testAFileWrittenLikeCofferOn341Opens() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("from341.db")
        // Salt first, so ShellRawKey derives the key from it; then the 3.4.1 shell writes the file with both.
        let salt = (0..<16).map { UInt8($0 * 7 + 3) }
        XCTAssertTrue(FileManager.default.createFile(atPath: path + ".salt", contents: Data(salt)))
        let key = try ShellRawKey.spec(passphrase: "pw", path: path + ".salt")
        let saltHex = salt.map { String(format: "%02x", $0) }.joined()
        let keyAndSalt = String(key.dropLast()) + saltHex + "'"
        let made = try Shell.run(
            "/usr/bin/sqlcipher", ["-batch", "-bail", path],
            input:
                "PRAGMA key = \"\(keyAndSalt)\";\nPRAGMA cipher_page_size = 4096;\nCREATE TABLE t(x);\nINSERT INTO t VALUES ('from 3.4.1');\n"
        )
        XCTAssertEqual(made.status, 0, made.stderr)
        let database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
        XCTAssertEqual(try database.read { try $0.fetchValue(String.self, sql: "SELECT x FROM t") }, "from 3.4.1")
        try database.write { try $0.execute(sql: "INSERT INTO t VALUES ('from 4')") }
        try database.close()
        let back = try Shell.sqlcipher(path, passphrase: key, "SELECT x FROM t ORDER BY rowid;")
        XCTAssertEqual(back.stdout, "from 3.4.1\nfrom 4\n", back.stderr)
    }

    /// Files SQLCipher 4 apps write with the defaults (the `sqlcipher4` shell, Python's sqlcipher3 4.12)
    /// open with the passphrase, stay SQLCipher 4 files when Coffer writes to them, and survive a
    /// passphrase change.
    func testSQLCipher4FilesOpen() throws {
        let directory = try TemporaryDirectory()
        let shellFile = directory.path("shell4.db")
        _ = try sqlcipher4(shellFile, "PRAGMA key = 'pw';\nCREATE TABLE t(x);\nINSERT INTO t VALUES ('shell');\n")
        var files = [shellFile]
        let pythonFile = directory.path("python4.db")
        let python = try Shell.run(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import sqlcipher3, sys; c = sqlcipher3.connect(sys.argv[1]); c.execute(\"PRAGMA key = 'pw'\"); "
                    + "c.execute('CREATE TABLE t(x)'); c.execute(\"INSERT INTO t VALUES ('python')\"); c.commit(); c.close()",
                pythonFile,
            ], input: "")
        if python.status == 0 { files.append(pythonFile) } else { XCTFail("python3 sqlcipher3: \(python.stderr)") }
        // Their HMAC-SHA512 pages are computed with page crypto's kept OpenSSL objects (PageCryptoTests).
        let crypto = DecryptedPageCache.cryptoCounts
        defer {
            XCTAssertGreaterThan(DecryptedPageCache.cryptoCounts.kept, crypto.kept)
            XCTAssertEqual(DecryptedPageCache.cryptoCounts.provider, crypto.provider)
        }
        for path in files {
            var database = try Database(path: path, configuration: Configuration(encryption: .passphrase("pw")))
            XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 1, path)
            try database.write { try $0.execute(sql: "INSERT INTO t VALUES ('coffer')") }
            try database.checkpoint(.truncate)
            try database.changePassphrase(to: .passphrase("new"))
            try database.close()
            XCTAssertEqual(try sqlcipher4(path, "PRAGMA key = 'new';\nSELECT count(*) FROM t;\n"), "ok\n2\n", path)
            database = try Database(path: path, configuration: Configuration(encryption: .passphrase("new")))
            XCTAssertEqual(try database.read { try $0.fetchValue(Int.self, sql: "SELECT count(*) FROM t") }, 2, path)
            try database.close()
        }
    }
}
