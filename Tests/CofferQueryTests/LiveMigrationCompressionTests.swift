import CofferTestSupport
import Foundation
import XCTest

@testable import Coffer

/// A live migration into a table with compressed columns (`ChatLine`: `content` compressed with the
/// dictionary its `kind` picks, `attachment` with plain zstd): the rows a batch moves and the rows a write
/// moves early are stored compressed, as a record's insert stores them, while every read sees plain values.
final class LiveMigrationCompressionTests: XCTestCase {
    func testMovedRowsAreStoredCompressedAndReadPlain() throws {
        let directory = try TemporaryDirectory()
        let source = directory.path("plain.sqlite")
        let texts = chatSamples(count: 400, seed: 3)
        // The source, written by Python's sqlite3 from the texts on standard input.
        let made = try Shell.run(
            "/usr/bin/python3",
            [
                "-c",
                """
                import json, sqlite3, sys
                texts = json.load(sys.stdin)
                db = sqlite3.connect(sys.argv[1])
                db.execute("CREATE TABLE chat_v1(id INTEGER PRIMARY KEY, kind INTEGER, content TEXT, attachment BLOB)")
                db.executemany("INSERT INTO chat_v1 VALUES (?, ?, ?, ?)",
                    [(i + 1, i % 3, t, (t * 4).encode() if i % 10 == 0 else None) for i, t in enumerate(texts)])
                db.commit()
                """,
                source,
            ], input: String(decoding: try JSONEncoder().encode(texts), as: UTF8.self))
        XCTAssertEqual(made.status, 0, made.stderr)
        let database = try Database(path: directory.path("app.db"), configuration: Configuration(encryption: .none))
        try database.write { db in
            try db.trainCompressionDictionary(id: 1, from: chatSamples(count: 2000), maximumSize: 16 * 1024)
            try db.trainCompressionDictionary(id: 2, from: chatSamples(count: 2000, seed: 5), maximumSize: 8 * 1024)
        }
        var options = LiveMigrationOptions()
        options.batchSize = 50
        options.pauseBetweenBatches = 0.2
        let migration = try database.migrateLive(ChatLine.self, from: .table("chat_v1", inFile: source), options: options)
        migration.pause()
        let expected = texts.enumerated().map { index, text in
            ChatLine(
                id: Int64(index + 1), kind: Int64(index % 3), content: text,
                attachment: index % 10 == 0 ? Data((text + text + text + text).utf8) : nil)
        }
        // Plain through the union before the rows move.
        XCTAssertEqual(try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }, expected)
        // A write moves row 200 early (an update of another column), stored compressed too.
        try database.write { db in XCTAssertEqual(try ChatLine.filter { $0.id == 200 }.updateAll(db) { [$0.kind.set(to: 1)] }, 1)
        }
        // A recompression pass meanwhile rewrites the rows in the table (the rest are stored as they move);
        // before, it walked the view, which has no rowids, and rewrote nothing.
        XCTAssertGreaterThanOrEqual(try database.recompress(ChatLine.self), 1)
        try migration.finishNow()

        var after = expected
        after[199].kind = 1
        XCTAssertEqual(try database.read { try ChatLine.order { $0.id.asc }.fetchAll($0) }, after)
        let stored = try database.read { db in
            try db.fetchAll(
                sql: "SELECT id, kind, typeof(content), hex(substr(content, 1, 2)), length(CAST(content AS BLOB)) FROM chat_line")
        }
        var storedBytes = 0
        var compressed = 0
        for row in stored {
            if try row.decode(String.self, at: 2) == "blob" {
                // Compressed TEXT (0xC0) naming the dictionary the row's kind picks (kind 0: none).
                XCTAssertEqual(try row.decode(String.self, at: 3), "C0" + ["00", "01", "02"][try row.decode(Int.self, at: 1)])
                compressed += 1
            }
            storedBytes += try row.decode(Int.self, at: 4)
        }
        let plainBytes = texts.reduce(0) { $0 + $1.utf8.count }
        XCTAssertGreaterThan(compressed, 250)
        XCTAssertLessThan(storedBytes, plainBytes * 3 / 4, "stored \(storedBytes) of \(plainBytes) bytes")
        XCTAssertEqual(
            try database.read {
                try $0.fetchValue(String.self, sql: "SELECT hex(substr(content, 1, 2)) FROM chat_line WHERE id = 200")
            },
            "C001")
        let attachments = try database.read { db in
            try db.fetchValue(
                Int.self,
                sql: "SELECT count(*) FROM chat_line WHERE typeof(attachment) = 'blob' AND substr(attachment, 1, 1) = x'C1'")
        }
        XCTAssertEqual(attachments, 40, "every attachment stored compressed")
        try database.close()
    }
}
