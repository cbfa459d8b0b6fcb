import CofferTestSupport
import XCTest

@testable import CofferRepair

final class SalvageDamageTests: XCTestCase {
    /// The standard schema plus `notes`, a table with exactly msgs' shape and overlapping rowids, so that
    /// attributing an orphan msgs leaf is a real decision.
    private let twinSQL =
        standardSchemaSQL + """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL, data BLOB);
            INSERT INTO notes SELECT id, sender || '-n', body, score, data FROM msgs;
            """

    func testZeroedInteriorPageLeavesAreAdoptedIntoTheRightTable() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("interior.db")
        try Shell.sqlcipher(path, pageSize: 1024, twinSQL)
        let msgs = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "msgs"))
        let notes = Set(try GroundTruth.rows(path, key: "pw", pageSize: 1024, table: "notes"))
        try Damage.zeroNonRootInterior(of: "msgs", in: path, key: "pw", pageSize: 1024)

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertGreaterThan(report.orphanLeavesAdopted, 10)
        XCTAssertEqual(report.orphanLeavesInferred, 0)
        XCTAssertEqual(sink.rowSet("msgs"), msgs, "every row of every surviving leaf, and nothing else")
        XCTAssertEqual(sink.rowSet("notes"), notes)
        XCTAssertEqual(report.rowsDropped, 0)
        XCTAssertEqual(report.pagesZero, 1)
    }

    func testFlippedLeafLosesOnlyItsOwnRows() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("leaf.db")
        try Shell.sqlcipher(path, twinSQL)
        let msgs = try GroundTruth.rows(path, key: "pw", table: "msgs")
        let roles = try pageRoles(path, key: "pw")
        let leaves = roles.filter { $0.owner == "msgs" && $0.role == .tableLeaf }
        let victim = leaves[leaves.count / 2].pageNumber
        let lost = try leafRowids(path, key: "pw", page: victim)
        XCTAssertFalse(lost.isEmpty)
        try Damage.flip(path, page: victim, pageSize: 4096, offsetInPage: 1500, count: 3)

        let (sink, report) = try salvage(path, key: "pw")
        let expected = Set(
            msgs.filter { row in
                if case .integer(let rowid) = row[0] { return !lost.contains(rowid) }
                return true
            })
        XCTAssertEqual(sink.rowSet("msgs"), expected)
        XCTAssertEqual(report.pagesBadHMAC, 1)
        XCTAssertEqual(sink.rowSet("notes").count, try GroundTruth.rows(path, key: "pw", table: "notes").count + 0)
    }

    func testDamagedOverflowPageDropsThatRowOnly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("overflow.db")
        try Shell.sqlcipher(path, standardSchemaSQL)
        let msgs = try GroundTruth.rows(path, key: "pw", table: "msgs")
        let chains = try overflowChains(path, key: "pw", table: "msgs")
        let (rowid, pages) = try XCTUnwrap(chains.sorted { $0.key < $1.key }.first)
        XCTAssertGreaterThanOrEqual(pages.count, 1)
        try Damage.flip(path, page: pages[pages.count - 1], pageSize: 4096, offsetInPage: 700)

        let (sink, report) = try salvage(path, key: "pw")
        XCTAssertEqual(sink.rowSet("msgs"), Set(msgs.filter { $0[0] != .integer(rowid) }))
        XCTAssertEqual(report.overflowChainsBroken, 1)
        XCTAssertEqual(report.rowsDropped, 1)
        XCTAssertFalse(sink.rows["msgs", default: []].contains { $0.rowid == rowid }, "never stored truncated")
    }

    /// Truth rows of msgs as inferred tables see them: `id` (the rowid), then the record, whose first field,
    /// the INTEGER PRIMARY KEY, reads the rowid (whole REALs as the integers stored on disk).
    private func inferredShape(_ truth: [[SalvagedValue]]) -> Set<[SalvagedValue]> {
        Set(
            truth.map { row in
                var shaped = row
                if case .real(let score) = row[4], score.rounded() == score { shaped[4] = .integer(Int64(score)) }
                return shaped
            })
    }

    private func assertPageOneLossRecovered(_ path: String, key: String?, truth: [[SalvagedValue]]) throws {
        let (sink, report) = try salvage(path, key: key)
        XCTAssertFalse(report.schemaReadable)
        let inferred = sink.tables.filter(\.isInferred)
        XCTAssertFalse(inferred.isEmpty)
        XCTAssertTrue(inferred.allSatisfy { $0.name.hasPrefix("recovered_") })
        // `id` (the rowid), then msgs's five fields, the first (its INTEGER PRIMARY KEY) reading the rowid.
        let fiveColumn = inferred.filter { $0.columns.count == 6 }.flatMap { (sink.rows[$0.name] ?? []).map(\.values) }
        XCTAssertEqual(Set(fiveColumn), inferredShape(truth), "all msgs rows, no resurrected or invented rows")
        XCTAssertEqual(report.rowsDropped, 0)
    }

    func testZeroedPageOneRecoversRowsIntoInferredTablesPlaintext() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("p1.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=4096;\n" + standardSchemaSQL)
        let truth = try GroundTruth.rows(path, key: .none, table: "msgs")
        try Damage.zeroPage(path, page: 1, pageSize: 4096)
        try assertPageOneLossRecovered(path, key: .none, truth: truth)
    }

    func testDestroyedPageOneRecoversRowsIntoInferredTablesEncrypted() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e1.db")
        try Shell.sqlcipher(path, standardSchemaSQL)
        let truth = try GroundTruth.rows(path, key: "pw", table: "msgs")
        // Keep the salt (bytes 0–15, without which nothing decrypts); destroy the rest of page 1.
        try Damage.overwrite(path, at: 16, with: [UInt8](repeating: 0, count: 4096 - 16))
        try assertPageOneLossRecovered(path, key: "pw", truth: truth)
    }

    func testDeletedRowsAreNeverResurrectedWithoutSecureDelete() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("deleted.db")
        try Shell.run(
            "sqlite3", path,
            """
            PRAGMA page_size=1024; PRAGMA secure_delete=off;
            CREATE TABLE t(id INTEGER PRIMARY KEY, body TEXT);
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 3000)
            INSERT INTO t(body) SELECT printf('ALIVE-%06d', i) FROM n;
            UPDATE t SET body = printf('GONE-%06d', id) WHERE id BETWEEN 1000 AND 2000 OR id % 5 = 0;
            DELETE FROM t WHERE body LIKE 'GONE-%';
            """)
        let truth = try GroundTruth.rows(path, key: .none, pageSize: 1024, table: "t")
        let raw = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertNotNil(raw.range(of: Data("GONE-001500".utf8)), "the deleted bytes are still in the file")
        XCTAssertTrue(try pageRoles(path, key: .none).contains { $0.role == .freelistLeaf })

        let (sink, report) = try salvage(path, key: .none)
        XCTAssertEqual(sink.rowSet("t"), Set(truth))
        XCTAssertEqual(report.orphanLeavesAdopted + report.orphanLeavesInferred, 0)
    }
}

final class SchemaRecoveryTests: XCTestCase {
    func testMultiPageSchemaIsRecoveredFromItsLeavesWhenPageOneIsLost() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("schema.db")
        var sql = "PRAGMA page_size=4096;\n"
        for index in 1...40 {
            sql +=
                "CREATE TABLE table_\(index)(id INTEGER PRIMARY KEY, a_rather_long_column_name_\(index) TEXT NOT NULL DEFAULT 'x', another_long_column_\(index) REAL, yet_another_one_\(index) BLOB);\n"
            sql +=
                "CREATE INDEX index_\(index) ON table_\(index)(a_rather_long_column_name_\(index), another_long_column_\(index));\n"
            sql += "INSERT INTO table_\(index) VALUES (\(index), 'row of \(index)', \(index).25, x'0102');\n"
        }
        try Shell.run("sqlite3", path, sql)
        XCTAssertEqual(try pageRoles(path, key: .none).first?.role, .header)
        try Damage.zeroPage(path, page: 1, pageSize: 4096)

        let (sink, report) = try salvage(path, key: .none)
        XCTAssertFalse(report.schemaReadable)
        XCTAssertGreaterThan(report.schemaLeavesRecovered, 1, "sqlite_master spans several leaves")
        XCTAssertEqual(report.orphanLeavesInferred, 0)
        XCTAssertEqual(Set(sink.tables.map(\.name)), Set((1...40).map { "table_\($0)" }))
        for index in 1...40 {
            XCTAssertEqual(
                sink.rowSet("table_\(index)"),
                [
                    [
                        .integer(Int64(index)), .integer(Int64(index)), .text(Array("row of \(index)".utf8)),
                        .real(Double(index) + 0.25), .blob([1, 2]),
                    ]
                ])
        }
    }
}
