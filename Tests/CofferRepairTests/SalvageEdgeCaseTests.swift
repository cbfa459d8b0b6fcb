import CofferTestSupport
import XCTest

@testable import CofferRepair

final class SalvageEdgeCaseTests: XCTestCase {
    func testWithoutRowidOrphanLeavesAreAdoptedAndInteriorRowsAreTheOnlyLoss() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("wr.db")
        try Shell.sqlcipher(path, pageSize: 1024, standardSchemaSQL)
        let truth = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "kv", withRowid: false))
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        var visited = Set<UInt32>()
        let root = try XCTUnwrap(Schema.read(from: file, visited: &visited).tables.first { $0.name == "kv" }?.rootPage)
        let interior = try XCTUnwrap(
            PageRoles.classify(file).first { $0.owner == "kv" && $0.role == .indexInterior && $0.pageNumber != root })
        // An index B-tree keeps entries in its interior cells: those rows are lost with the page.
        let cells = try TreeWalker(source: file).parse(interior.pageNumber).get().cells
        let lost = Set(try cells.map { try XCTUnwrap(RecordDecoder.decode($0.localPayload)) })
        XCTAssertFalse(lost.isEmpty)
        try Damage.zeroPage(path, page: interior.pageNumber, pageSize: 1024)

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertGreaterThan(report.orphanLeavesAdopted, 0)
        XCTAssertEqual(sink.rowSet("kv"), truth.subtracting(lost))
        XCTAssertEqual(sink.rowSet("msgs").count, try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "msgs").count)
    }

    func testOverflowChainLoopDropsTheRow() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("loop.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=1024;\n" + standardSchemaSQL)
        let truth = try GroundTruth.rows(path, key: .none, pageSize: 1024, table: "msgs")
        let chains = try overflowChains(path, key: .none, table: "msgs")
        let (rowid, pages) = try XCTUnwrap(chains.first { $0.value.count >= 3 })
        // The second overflow page now points back at the first: a loop.
        let first = pages[0]
        try Damage.overwrite(
            path, at: UInt64(pages[1] - 1) * 1024,
            with: [
                UInt8(first >> 24 & 0xff), UInt8(first >> 16 & 0xff), UInt8(first >> 8 & 0xff), UInt8(first & 0xff),
            ])
        let (sink, report) = try salvage(path, key: .none)
        XCTAssertEqual(sink.rowSet("msgs"), Set(truth.filter { $0[0] != .integer(rowid) }))
        XCTAssertEqual(report.overflowChainsBroken, 1)
        XCTAssertEqual(report.rowsDropped, 1)
    }

    func testAutoVacuumFileWithPointerMapSalvagesExactlyAndReportsProgress() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("av.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=1024; PRAGMA auto_vacuum=FULL;\n" + standardSchemaSQL)
        XCTAssertTrue(try pageRoles(path, key: .none).contains { $0.role == .pointerMap })
        let salvager = try Salvager(path: path, key: .none)
        var sink = CollectingSink()
        var calls = 0
        let report = try salvager.run(into: &sink) { progress in
            calls += 1
            XCTAssertLessThanOrEqual(progress.pagesScanned, progress.pagesTotal * 2)
        }
        XCTAssertGreaterThan(calls, 1)
        XCTAssertEqual(sink.rowSet("msgs"), Set(try GroundTruth.rows(path, key: .none, pageSize: 1024, table: "msgs")))
        XCTAssertEqual(report.orphanLeavesAdopted + report.orphanLeavesInferred + report.pagesUnparseable, 0)
        let json = try JSONEncoder().encode(report)
        let object = try XCTUnwrap(JSONSerialization.jsonObject(with: json) as? [String: Any])
        for key in [
            "pages_total", "pages_ok", "pages_bad_hmac", "pages_unparseable", "orphan_leaves_adopted",
            "overflow_chains_broken", "tables", "rows_salvaged", "rows_dropped", "seconds", "page_size", "profile",
        ] {
            XCTAssertNotNil(object[key], key)
        }
    }

    func testRowFitFollowsAffinityRules() {
        XCTAssertFalse(RowFit.fits(.text(Array("42".utf8)), .integer))
        XCTAssertFalse(RowFit.fits(.text(Array(" -1.5e3 ".utf8)), .real))
        XCTAssertTrue(RowFit.fits(.text(Array("4x2".utf8)), .integer))
        XCTAssertTrue(RowFit.fits(.text(Array("42".utf8)), .text))
        XCTAssertFalse(RowFit.fits(.integer(1), .text))
        XCTAssertFalse(RowFit.fits(.real(2.0), .integer))
        XCTAssertTrue(RowFit.fits(.real(2.5), .integer))
        XCTAssertTrue(RowFit.fits(.integer(2), .real))
        XCTAssertTrue(RowFit.fits(.blob([1]), .integer))
        let table = TableDescription(
            name: "t", rootPage: 2, sql: "",
            columns: [
                ColumnDescription(name: "id", declaredType: "INTEGER", affinity: .integer),
                ColumnDescription(name: "x", declaredType: "REAL", affinity: .real),
            ], rowidAliasColumn: 0, withoutRowid: false, primaryKeyColumns: [0], isInferred: false)
        XCTAssertEqual(
            RowFit.row(fields: [.null, .integer(3)], rowid: 7, table: table),
            SalvagedRow(rowid: 7, values: [.integer(7), .real(3)]))
        XCTAssertNil(RowFit.row(fields: [.integer(7), .integer(3)], rowid: 7, table: table), "alias must be NULL")
        XCTAssertNil(RowFit.row(fields: [.null, .integer(3), .null], rowid: 7, table: table), "too many fields")
    }

    func testVarintAndRecordRejectTruncation() {
        XCTAssertEqual(Varint.decode(ByteView([0x81, 0x00]), at: 0)?.value, 128)
        XCTAssertNil(Varint.decode(ByteView([0x81]), at: 0))
        XCTAssertEqual(Varint.decode(ByteView([UInt8](repeating: 0xff, count: 9)), at: 0)?.value, UInt64.max)
        XCTAssertEqual(
            RecordDecoder.decode([0x03, 0x01, 0x13, 0x05, 0x61, 0x62, 0x63]), [.integer(5), .text(Array("abc".utf8))])
        XCTAssertNil(RecordDecoder.decode([0x03, 0x01, 0x13, 0x05, 0x61, 0x62]), "payload shorter than its header says")
        XCTAssertNil(RecordDecoder.decode([0x03, 0x01, 0x13, 0x05, 0x61, 0x62, 0x63, 0x64]), "trailing bytes")
        XCTAssertNil(RecordDecoder.decode([0x02, 0x0a]), "reserved serial type")
        XCTAssertNil(RecordDecoder.decode([0x09, 0x01]), "header longer than payload")
    }
}

final class SalvageDuplicateTests: XCTestCase {
    func testAStaleCopyOfAReachedLeafIsDropped() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("dup.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=4096;\n" + standardSchemaSQL)
        let truth = Set(try GroundTruth.rows(path, key: .none, table: "msgs"))
        let leaf = try XCTUnwrap(
            try pageRoles(path, key: .none).filter { $0.owner == "msgs" && $0.role == .tableLeaf }.dropFirst(3).first)
        let rowids = try leafRowids(path, key: .none, page: leaf.pageNumber)
        // Append a stale copy of that leaf as a new, unreferenced page, with its text altered ("message" →
        // "MESSAGE"): if the orphan copy won, the altered rows would show up.
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        try handle.seek(toOffset: UInt64(leaf.pageNumber - 1) * 4096)
        var copy = [UInt8](try XCTUnwrap(handle.read(upToCount: 4096)))
        let needle = Array("message".utf8)
        var index = 0
        while index + needle.count <= copy.count {
            if Array(copy[index..<(index + needle.count)]) == needle {
                for offset in 0..<needle.count { copy[index + offset] -= 0x20 }
            }
            index += 1
        }
        try handle.seekToEnd()
        handle.write(Data(copy))
        try handle.close()

        let (sink, report) = try salvage(path, key: .none)
        XCTAssertEqual(sink.rowSet("msgs"), truth)
        // msgs' tree was walked without a gap, so it has no room for an orphan leaf: the stale copy is
        // dropped (not adopted and deduplicated, not put in an inferred table).
        XCTAssertFalse(rowids.isEmpty)
        XCTAssertEqual(report.orphanLeavesAdopted, 0)
        XCTAssertEqual(report.orphanPagesIgnored, 1)
        XCTAssertEqual(report.orphanLeavesInferred, 0)
        XCTAssertEqual(sink.rows.keys.filter { $0.hasPrefix("recovered") }, [])
    }
}

final class SalvageIndexAmbiguityTests: XCTestCase {
    func testOrphanPagesOfAnIndexShapedLikeAWithoutRowidTableAreNotAdopted() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("ambiguous.db")
        try Shell.sqlcipher(
            path, pageSize: 1024,
            """
            CREATE TABLE w(a TEXT PRIMARY KEY, b TEXT, c TEXT) WITHOUT ROWID;
            CREATE INDEX w_bc ON w(b, c);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 800)
            INSERT INTO w SELECT printf('a%05d', i), printf('b%05d', 800 - i), hex(randomblob(8)) FROM n;
            """)
        let truth = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "w", withRowid: false))
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        var visited = Set<UInt32>()
        let indexRoot = try XCTUnwrap(Schema.read(from: file, visited: &visited).indexes.first { $0.name == "w_bc" }?.rootPage)
        XCTAssertEqual(try TreeWalker(source: file).parse(indexRoot).get().page.type, .indexInterior)
        // Orphan every leaf of the index: its entries (b, c, a) have the table's width and all-TEXT shape.
        try Damage.zeroPage(path, page: indexRoot, pageSize: 1024)

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertEqual(sink.rowSet("w"), truth, "no permuted index entries adopted as rows")
        XCTAssertGreaterThan(report.orphanPagesIgnored, 0)
        XCTAssertEqual(report.orphanLeavesAdopted, 0)
    }
}

final class SalvageWithoutRowidIndexWidthTests: XCTestCase {
    /// Regression (corpus encrypted-4096-flip-bytes-2): a WITHOUT ROWID table as wide as one of its indexes
    /// lost every row when its root was unreadable, because orphan leaves of that width were all taken for
    /// index entries. receipts_by_reader permutes the columns, so affinities tell it apart; text fits the
    /// REAL column of messages_by_conversation, but an entry of that index ends with a rowid of messages,
    /// and read_at values are none.
    func testWithoutRowidLeavesAreAdoptedWhenAnIndexHasTheSameWidthButNotTheSameShape() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("receipts.db")
        try Shell.sqlcipher(
            path, pageSize: 1024,
            """
            CREATE TABLE receipts(message_id INTEGER NOT NULL, reader TEXT NOT NULL, read_at INTEGER,
                                  PRIMARY KEY(message_id, reader)) WITHOUT ROWID;
            CREATE INDEX receipts_by_reader ON receipts(reader, read_at);
            CREATE TABLE messages(id INTEGER PRIMARY KEY, conversation_id INTEGER, sent_at REAL);
            CREATE INDEX messages_by_conversation ON messages(conversation_id, sent_at);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1500)
            INSERT INTO receipts SELECT i, printf('user%d', (i * 7) % 13), 1600000000 + i * 60 FROM n;
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1500)
            INSERT INTO messages SELECT i, i % 40, 1600000000 + i * 61.5 FROM n;
            """)
        let truth = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "receipts", withRowid: false))
        let file = try DatabaseFile(path: path, key: .passphrase("pw"))
        var visited = Set<UInt32>()
        let root = try XCTUnwrap(Schema.read(from: file, visited: &visited).tables.first { $0.name == "receipts" }?.rootPage)
        let rootPage = try TreeWalker(source: file).parse(root).get()
        XCTAssertEqual(rootPage.page.type, .indexInterior)
        // The root's own cells are rows too (an index B-tree keeps entries in interior cells): lost with it.
        let lost = Set(try rootPage.cells.map { try XCTUnwrap(RecordDecoder.decode($0.localPayload)) })
        try Damage.flip(path, page: root, pageSize: 1024, offsetInPage: 200)

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertGreaterThan(report.orphanLeavesAdopted, 0)
        XCTAssertEqual(sink.rowSet("receipts"), truth.subtracting(lost))
    }
}

final class SalvageFreePageTests: XCTestCase {
    /// A zeroed page 1 reads as a header with no freelist, which is not "no free pages": the trunk that
    /// survives is found by scanning and its stale leaves (deleted rows, secure_delete off) stay dead.
    func testZeroedPageOneDoesNotResurrectFreePages() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("free.db")
        try Shell.run(
            "sqlite3", path,
            """
            PRAGMA page_size=4096; PRAGMA secure_delete=OFF;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO t SELECT i, printf('body %d %s', i, hex(zeroblob(20))) FROM n;
            DELETE FROM t WHERE id BETWEEN 1000 AND 2000;
            """)
        try Damage.zeroPage(path, page: 1, pageSize: 4096)
        let (sink, _) = try salvage(path, key: .none)
        let rowids = sink.rows.values.flatMap { $0 }.compactMap(\.rowid)
        XCTAssertGreaterThan(rowids.count, 1500)
        XCTAssertEqual(rowids.filter { (1000...2000).contains($0) }, [], "deleted rows resurrected")
    }
}
