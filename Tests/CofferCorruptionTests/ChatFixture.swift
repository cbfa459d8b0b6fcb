// ChatFixture — databases shaped like a chat app's, built with the real `sqlcipher` shell in two phases:
//
// 1. conversations (rowid, whole and fractional REALs), messages (3,000 rows, 30 of them with a 6,000-byte
//    attachment that overflows), receipts (WITHOUT ROWID, composite key), drafts, three indexes.
//    A copy of the file after this phase is the *history*: every row version that ever existed.
// 2. an update of every 17th message and every 19th receipt, deletion of a 300-message range and every
//    23rd message, and DROP TABLE drafts. On plaintext files `secure_delete` is OFF, so freeblocks and
//    free pages still hold deleted rows, dropped drafts and pre-update versions: a repair that reads them
//    resurrects rows, which the corpus detects by matching output rows against the history.

import CofferRepair
import CofferTestSupport
import Foundation
import XCTest

struct ChatFixture {
    /// The pristine database.
    let path: String
    /// The database after phase 1 (every row version that ever existed).
    let historyPath: String
    /// The passphrase, nil for plaintext.
    let passphrase: String?
    /// The page size.
    let pageSize: Int
    /// For a file SQLCipher 4.12 wrote (`sqlcipher3-binary`): plaintext copies of `path` and `historyPath`
    /// exported by SQLCipher 4.12 itself, from which the linked 3.4.1 library reads the ground truth.
    var plaintextCopies: (pristine: String, history: String)? = nil

    /// The file's cipher profile.
    var settings: CipherSettings { passphrase == nil ? .plaintext : plaintextCopies == nil ? .sqlcipher3 : .sqlcipher4 }

    var flavor: String {
        (plaintextCopies != nil ? "sqlcipher4" : passphrase == nil ? "plain" : "encrypted") + "-\(pageSize)"
    }

    static let phase1 = """
        CREATE TABLE conversations(id INTEGER PRIMARY KEY, title TEXT NOT NULL, created_at REAL, muted INTEGER DEFAULT 0);
        CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL, sender TEXT, body TEXT,
                              sent_at REAL, attachment BLOB);
        CREATE TABLE receipts(message_id INTEGER NOT NULL, reader TEXT NOT NULL, read_at INTEGER,
                              PRIMARY KEY(message_id, reader)) WITHOUT ROWID;
        CREATE TABLE drafts(id INTEGER PRIMARY KEY, conversation_id INTEGER, body TEXT);
        CREATE INDEX messages_by_conversation ON messages(conversation_id, sent_at);
        CREATE INDEX messages_by_sender ON messages(sender);
        CREATE INDEX receipts_by_reader ON receipts(reader, read_at);
        BEGIN;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 40)
        INSERT INTO conversations SELECT i, printf('conversation %d', i), 1600000000 + i * 3600.5 * (i % 2), i % 5 = 0 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
        INSERT INTO messages SELECT i, 1 + i % 40, printf('user%d', i % 13),
            printf('message %d: ', i) || substr(replace(hex(zeroblob(100)), '00', printf('%02d', i % 97)), 1, 20 + (i * 37) % 90),
            1600000000 + i * 61.5,
            CASE WHEN i % 100 = 7 THEN CAST(printf('%d:', i) || replace(hex(zeroblob(3000)), '00', printf('%02x', i % 251)) AS BLOB)
                 WHEN i % 4 = 0 THEN CAST(printf('thumb-%d', i) AS BLOB) ELSE NULL END
          FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
        INSERT INTO receipts SELECT i, printf('user%d', (i * 7) % 13), 1600000000 + i * 60 FROM n;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
        INSERT INTO receipts SELECT i, printf('user%d', (i * 7 + 1) % 13), 1600000100 + i * 60 FROM n WHERE i % 3 = 0;
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 300)
        INSERT INTO drafts SELECT i, 1 + i % 40, printf('draft %d ', i) || hex(zeroblob(40 + i % 30)) FROM n;
        COMMIT;
        """

    static let phase2 = """
        BEGIN;
        UPDATE messages SET body = 'edited: ' || body, sent_at = sent_at + 0.25 WHERE id % 17 = 0;
        UPDATE receipts SET read_at = read_at + 7 WHERE message_id % 19 = 0;
        DELETE FROM messages WHERE id BETWEEN 1200 AND 1500 OR id % 23 = 0;
        DELETE FROM receipts WHERE message_id BETWEEN 1200 AND 1500;
        DELETE FROM conversations WHERE id = 7;
        COMMIT;
        DROP TABLE drafts;
        """

    /// Builds the fixture in `directory`.
    static func make(in directory: TemporaryDirectory, passphrase: String?, pageSize: Int) throws -> ChatFixture {
        let name = (passphrase == nil ? "plain" : "encrypted") + "-\(pageSize)"
        let path = directory.path("\(name).db")
        let history = directory.path("\(name)-history.db")
        let prefix = passphrase == nil ? "PRAGMA page_size=\(pageSize);\nPRAGMA secure_delete=OFF;\n" : ""
        try run(path, passphrase: passphrase, pageSize: pageSize, prefix + phase1)
        try FileManager.default.copyItem(atPath: path, toPath: history)
        let secureDelete = passphrase == nil ? "PRAGMA secure_delete=OFF;\n" : ""
        try run(path, passphrase: passphrase, pageSize: pageSize, secureDelete + phase2)
        return ChatFixture(path: path, historyPath: history, passphrase: passphrase, pageSize: pageSize)
    }

    /// Whether python's `sqlcipher3` (SQLCipher 4) is installed.
    static var canMakeSQLCipher4: Bool {
        (try? Shell.run("/usr/bin/env", ["python3", "-c", "import sqlcipher3"]).status) == 0
    }

    /// The same two phases written by SQLCipher 4.12 with its defaults (4096-byte pages, SHA-512), and
    /// plaintext exports of both states for the ground truth.
    static func makeSQLCipher4(in directory: TemporaryDirectory, passphrase: String) throws -> ChatFixture {
        let path = directory.path("sqlcipher4-4096.db")
        let history = directory.path("sqlcipher4-4096-history.db")
        let copies = (pristine: directory.path("sqlcipher4-truth.db"), history: directory.path("sqlcipher4-history-truth.db"))
        let script = """
            import shutil, sqlcipher3, sys
            path, history, pristine_copy, history_copy, key, phase1, phase2 = sys.argv[1:]
            def connect(p):
                c = sqlcipher3.connect(p, isolation_level=None)
                c.execute("PRAGMA key = '%s'" % key.replace("'", "''"))
                return c
            def run(p, sql):
                c = connect(p); c.executescript(sql); c.close()
            def export(p, out):
                c = connect(p)
                c.execute("ATTACH DATABASE '%s' AS plain KEY ''" % out)
                c.execute("SELECT sqlcipher_export('plain')"); c.execute("DETACH DATABASE plain"); c.close()
            run(path, phase1); shutil.copy(path, history); run(path, phase2)
            export(path, pristine_copy); export(history, history_copy)
            """
        let result = try Shell.run(
            "/usr/bin/env", ["python3", "-c", script, path, history, copies.pristine, copies.history, passphrase, phase1, phase2])
        guard result.status == 0 else { throw LibraryReader.Failure(description: "sqlcipher3 failed: \(result.stderr)") }
        return ChatFixture(path: path, historyPath: history, passphrase: passphrase, pageSize: 4096, plaintextCopies: copies)
    }

    private static func run(_ path: String, passphrase: String?, pageSize: Int, _ sql: String) throws {
        let result = try Shell.sqlcipher(path, passphrase: passphrase, pageSize: pageSize, ".bail on\n" + sql)
        guard result.status == 0, result.stderr.isEmpty else {
            throw LibraryReader.Failure(description: "sqlcipher failed on \(path): \(result.stderr)")
        }
    }
}
