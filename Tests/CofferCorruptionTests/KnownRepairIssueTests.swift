// Repair defects the corpus found, each reduced to a small case. Each ran skipped (COFFER_RUN_KNOWN_ISSUES=1)
// while it failed and its guarantees were left unasserted in the corpus (CorpusRecallTests.knownIssues);
// fixed now, they run always as regression tests. A new defect gets a reduction here, skipped with
// `skipUnlessRequested` until fixed.

import CofferCorruption
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

final class KnownRepairIssueTests: XCTestCase {
    private func skipUnlessRequested(_ description: String) throws {
        if ProcessInfo.processInfo.environment["COFFER_RUN_KNOWN_ISSUES"] == nil {
            throw XCTSkip("known: \(description)")
        }
    }

    private func make(_ path: String, pageSize: Int, _ sql: String) throws {
        let result = try Shell.sqlcipher(
            path, passphrase: nil, pageSize: pageSize,
            ".bail on\nPRAGMA page_size=\(pageSize);\nPRAGMA secure_delete=OFF;\n" + sql)
        XCTAssertEqual(result.status, 0, result.stderr)
    }

    private func salvageRows(_ path: String) throws -> [SalvagedRow] {
        var sink = CollectingSink()
        _ = try Salvager(path: path, key: .none).run(into: &sink)
        return sink.rows.values.flatMap { $0 }
    }

    /// When the freelist cannot be walked (trunk damaged, or header offset 32 lost with page 1), free pages
    /// are scanned as orphans; with secure_delete off they still hold deleted rows, which come back. In the
    /// chat corpus the leaves of the dropped `drafts(id, conversation_id, body)` table are even adopted into
    /// `messages` (a record shorter than the table fits, as after ALTER TABLE ADD COLUMN): drafts 23, 46, …,
    /// 299 — ids of deleted messages — come back as messages rows (the "junk" column of the table).
    func testFreePagesAreNotAdoptedWhenTheFreelistIsLost() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let path = directory.path("freelist.db")
        try make(
            path, pageSize: 4096,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO t SELECT i, printf('body %d %s', i, hex(zeroblob(20))) FROM n;
            DELETE FROM t WHERE id BETWEEN 1000 AND 2000;
            """)
        let damaged = directory.path("damaged.db")
        let report = try CorruptionInjector.inject(input: path, output: damaged, key: .none, kind: .damageFreelistTrunk, seed: 1)
        XCTAssertEqual(report.pages.map(\.role), ["freelistTrunk"])
        let resurrected = try salvageRows(damaged).compactMap(\.rowid).filter { (1000...2000).contains($0) }
        XCTAssertEqual(resurrected.count, 0, "deleted rows resurrected, e.g. \(resurrected.prefix(5))")
    }

    /// With sqlite_master gone, orphan table leaves go to inferred tables, but orphan index-format leaves
    /// (the rows of WITHOUT ROWID tables) are only counted as `orphanPagesIgnored`: every row is lost although
    /// every page holding one is intact.
    func testWithoutRowidRowsSurviveLossOfPageOne() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let path = directory.path("wr.db")
        try make(
            path, pageSize: 4096,
            """
            CREATE TABLE kv(k TEXT PRIMARY KEY, v INTEGER) WITHOUT ROWID;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000)
            INSERT INTO kv SELECT printf('key%05d', i), i FROM n;
            """)
        let damaged = directory.path("damaged.db")
        _ = try CorruptionInjector.inject(input: path, output: damaged, key: .none, kind: .zeroPage1, seed: 1)
        XCTAssertGreaterThanOrEqual(try salvageRows(damaged).count, 2000)
    }

    /// Garbage over the roots of `messages`, of its index on (conversation_id, sent_at) and of the WITHOUT ROWID
    /// `receipts(message_id, reader, read_at)` (plain-4096 garbage-run seed 6 of the corpus): every receipts
    /// leaf is orphaned, and its records, read in the index's order, put `reader`'s text where `sent_at`'s
    /// numbers go — legal, so the index admitted them, and all 2,264 receipts were dropped as possible index
    /// entries. The table's order shows every field's affinity and the index's does not: the leaves are the
    /// table's, and only the rows on the root itself are lost.
    func testWithoutRowidLeavesAreNotTakenForAnotherTablesIndex() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let path = directory.path("receipts.db")
        try make(
            path, pageSize: 4096,
            """
            CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER, sent_at INTEGER, body TEXT);
            CREATE INDEX messages_by_conversation ON messages(conversation_id, sent_at);
            CREATE TABLE receipts(message_id INTEGER NOT NULL, reader TEXT NOT NULL, read_at INTEGER,
                                  PRIMARY KEY(message_id, reader)) WITHOUT ROWID;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO messages SELECT i, i % 40, 1600000000 + i * 20, printf('message %d', i) FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO receipts SELECT i, printf('user%d', i % 10), 1600000000 + i * 20 + 5 FROM n;
            """)
        let roots = try Shell.run(
            "sqlite3", path,
            "SELECT rootpage FROM sqlite_master WHERE name IN ('messages', 'messages_by_conversation', 'receipts');"
        ).split(separator: "\n").compactMap { UInt32($0) }
        XCTAssertEqual(roots.count, 3)
        var random = SeededGenerator(seed: 6)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        for root in roots {
            try handle.seek(toOffset: UInt64(root - 1) * 4096)
            try handle.write(contentsOf: Data((0..<4096).map { _ in UInt8(truncatingIfNeeded: random.next()) }))
        }
        try handle.close()
        let rows = try salvageRows(path)
        let receipts = rows.filter { $0.rowid == nil }
        XCTAssertGreaterThanOrEqual(receipts.count, 2900, "only the rows on the receipts root are lost")
        for row in receipts {
            guard case .integer(let id) = row.values[0] else { return XCTFail("receipts row \(row.values)") }
            XCTAssertEqual(row.values[1], .text(Array("user\(id % 10)".utf8)), "\(row.values)")
            XCTAssertEqual(row.values[2], .integer(1_600_000_000 + id * 20 + 5), "\(row.values)")
        }
        XCTAssertEqual(rows.filter { $0.rowid != nil }.count, 3000, "every message")
    }

    /// After truncation, an intact interior page whose child pointers reach past the new end of file is
    /// rejected whole (BTreePage.cells checks every child against pageCount). WITHOUT ROWID rows stored in its
    /// cells are lost, although the page is intact.
    func testInteriorPagesSurviveTruncation() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let path = directory.path("truncated.db")
        try make(
            path, pageSize: 1024,
            """
            CREATE TABLE kv(k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO kv SELECT printf('key%05d', i), hex(zeroblob(10 + i % 20)) FROM n;
            """)
        let file = try DatabaseFile(path: path, key: .none)
        let rows = RowPlacement.rows(in: file).rows
        // Keep pages 1–2: kv's root (page 2, an interior page) stays intact; every child is cut off.
        let damaged = directory.path("damaged.db")
        try FileManager.default.copyItem(atPath: path, toPath: damaged)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: damaged))
        try handle.truncate(atOffset: 2 * 1024)
        try handle.close()
        let rootRows = rows.filter { $0.pages == [2] }
        XCTAssertFalse(rootRows.isEmpty, "the root interior page holds rows")
        let salvaged = Set(try salvageRows(damaged).map(\.values))
        let lost = rootRows.filter { !salvaged.contains($0.record) }
        XCTAssertEqual(lost.count, 0, "intact rows of the root lost: \(lost.prefix(3).map(\.key))")
    }

    /// After truncation, an intact leaf holding one cell whose first overflow page was cut off is rejected
    /// whole (BTreePage.cells checks every overflow pointer against pageCount): its other rows, whose pages
    /// are all intact, are lost too, instead of only the row whose chain is gone.
    func testLeafKeepsItsOtherRowsWhenOneOverflowChainIsTruncated() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let path = directory.path("overflow-cut.db")
        try make(
            path, pageSize: 4096,
            """
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT, data BLOB);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 20)
            INSERT INTO t(id, body) SELECT i, printf('row %d', i) FROM n;
            INSERT INTO t(id, body, data) VALUES (21, 'big', zeroblob(20000));
            INSERT INTO t(id, body) VALUES (22, 'after');
            """)
        let file = try DatabaseFile(path: path, key: .none)
        let placed = RowPlacement.rows(in: file).rows
        let big = try XCTUnwrap(placed.first { $0.rowid == 21 })
        XCTAssertEqual(big.pages.first, 2, "one leaf, the root")
        XCTAssertEqual(big.pages.dropFirst().first, 3)
        // Keep pages 1–2: the leaf is intact, the big row's overflow chain is cut off.
        let damaged = directory.path("damaged.db")
        try FileManager.default.copyItem(atPath: path, toPath: damaged)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: damaged))
        try handle.truncate(atOffset: 2 * 4096)
        try handle.close()
        let intact = placed.filter { $0.pages == [2] }
        XCTAssertEqual(intact.count, 21)
        let salvaged = Set(try salvageRows(damaged).compactMap(\.rowid))
        let lost = intact.compactMap(\.rowid).filter { !salvaged.contains($0) }
        XCTAssertEqual(lost, [], "intact rows lost")
    }

    /// A plaintext file whose first 16 bytes (the magic) are damaged goes to page-size scoring, although
    /// header bytes 16–17 still say 1024. Scoring counts sampled pages whose B-tree header validates; a read
    /// at twice the true size starts on a true page boundary and validates about as often, so 2048 can win:
    /// it does on the plain-1024 chat fixture (824,320 bytes), and the corpus then recovers 23% of the rows
    /// after flip-salt, overwrite-header or zero-page1.
    func testPlaintextPageSizeSurvivesADamagedMagic() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let fixture = try ChatFixture.make(in: directory, passphrase: nil, pageSize: 1024)
        let damaged = directory.path("damaged.db")
        let report = try CorruptionInjector.inject(input: fixture.path, output: damaged, key: .none, kind: .flipSalt, seed: 1)
        XCTAssertEqual(report.pages.map(\.page), [1])
        XCTAssertEqual(try DatabaseFile(path: damaged, key: .none).pageSize, 1024)
    }

    /// The plaintext baseline. Debian's sqlite3 3.40.1 has the `.recover` command but is built without
    /// SQLITE_ENABLE_DBPAGE_VTAB, so `.recover` fails ("SQL logic error") on every file, even a pristine one;
    /// SQLCipher 4.9's shell (`COFFER_SQLCIPHER4_SHELL`, set by Tools/test-sqlcipher4.sh) runs it.
    func testRecoverBaselineIsAvailable() throws {
        let directory = try TemporaryDirectory("coffer-known")
        let path = directory.path("pristine.db")
        try make(path, pageSize: 4096, "CREATE TABLE t(x); INSERT INTO t VALUES (1);")
        guard try RepairRun.recoverWorks(on: path, directory: directory) else {
            throw XCTSkip("known: this sqlite3 has no sqlite_dbpage, so .recover cannot serve as a baseline here")
        }
    }
}
