import Coffer
import CofferTestSupport
import XCTest

@testable import CofferRepair

/// RepairWriter builds indexes when every table's tree has been walked (RepairWriter+EarlyIndexes), while
/// the salvager still walks the input's indexes; the output must be what building them after the last
/// row gives.
final class RepairWriterEarlyIndexTests: XCTestCase {
    /// Forwards everything to a RepairWriter and, right after `tableTreesWalked`, hands it `late` rows for
    /// table `t`, as an orphan adopted into `t` would arrive.
    private struct LateRowSink: SalvageSink {
        let writer: RepairWriter
        let late: [SalvagedRow]
        var tables: [String: TableDescription] = [:]

        mutating func begin(table: TableDescription) throws {
            tables[table.name] = table
            try writer.begin(table: table)
        }

        mutating func insert(_ row: SalvagedRow, into table: TableDescription) throws {
            try writer.insert(row, into: table)
        }

        mutating func insert(_ rows: [SalvagedRow], into table: TableDescription) throws {
            try writer.insert(rows, into: table)
        }

        static func bulkLoad(into sink: inout LateRowSink, _ body: (inout LateRowSink) throws -> Void) throws {
            var writer = sink.writer
            try RepairWriter.bulkLoad(into: &writer) { _ in try body(&sink) }
        }

        mutating func tableTreesWalked(schema: Schema) throws {
            try writer.tableTreesWalked(schema: schema)
            let table = try XCTUnwrap(tables["t"])
            try writer.insert(late, into: table)
        }

        mutating func finish(schema: Schema) throws { try writer.finish(schema: schema) }
    }

    private let rowsSQL = """
        CREATE TABLE t(id INTEGER PRIMARY KEY, u TEXT, v INTEGER);
        WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 3000)
        INSERT INTO t SELECT i, 'u' || i, i % 17 FROM s;
        """

    private func output(_ path: String, _ sql: String) throws -> String {
        try Shell.run("sqlcipher", path, "PRAGMA key='out';\nPRAGMA cipher_page_size=4096;\n" + sql)
    }

    private func writer(_ path: String) throws -> RepairWriter {
        try RepairWriter(path: path, encryption: .passphrase("out"), cipher: CipherOptions(keyDerivation: .sqlcipher3))
    }

    func testALateRowMakesTheEarlyIndexesBeBuiltAgainAfterIt() throws {
        let dir = try TemporaryDirectory()
        let source = dir.path("src.db")
        try Shell.sqlcipher(source, rowsSQL + "CREATE UNIQUE INDEX tu ON t(u);\nCREATE INDEX tv ON t(v);")
        let path = dir.path("out.db")
        let writer = try writer(path)
        // A row whose u repeats row 1's: with the indexes built after it, as at `finish`, the row goes in
        // and the UNIQUE index is the one refused. Kept indexes would refuse the row instead.
        var sink = LateRowSink(
            writer: writer, late: [SalvagedRow(rowid: 9000, values: [.null, .text(Array("u1".utf8)), .integer(5)])])
        let report = try Salvager(path: source, key: .passphrase("pw")).run(into: &sink, pipeline: SalvagePipeline())
        try writer.close()

        XCTAssertEqual(report.rowsSalvaged, 3000)
        XCTAssertEqual(writer.outcome.rowsWritten, 3001)
        XCTAssertEqual(writer.outcome.rowsRejected, 0)
        XCTAssertEqual(writer.outcome.objectsFailed, ["tu"])
        let issue = try XCTUnwrap(writer.outcome.issues.first)
        XCTAssertEqual(writer.outcome.issues.count, 1)
        XCTAssertTrue(issue.reason.contains("UNIQUE"), issue.reason)
        XCTAssertEqual(writer.outcome.objectsCreated, ["tv"])
        XCTAssertEqual(
            try output(path, "SELECT name FROM sqlite_master WHERE type = 'index';\nPRAGMA integrity_check;"), "tv\nok\n")
        XCTAssertEqual(try output(path, "SELECT count(*) FROM t INDEXED BY tv WHERE v = 5;"), "\(3000 / 17 + 1 + 1)\n")
    }

    func testAnIndexRefusedEarlyIsReportedOnceWithItsReason() throws {
        let dir = try TemporaryDirectory()
        let source = dir.path("src.db")
        // Duplicate u values under an index whose schema entry says UNIQUE (a schema edited in place):
        // OUTPUT cannot build it from the tree's own rows.
        try Shell.sqlcipher(
            source,
            rowsSQL + """
                UPDATE t SET u = 'same' WHERE id <= 2;
                CREATE INDEX tu ON t(u);
                PRAGMA writable_schema = ON;
                UPDATE sqlite_master SET sql = 'CREATE UNIQUE INDEX tu ON t(u)' WHERE name = 'tu';
                """)
        let path = dir.path("out.db")
        let writer = try writer(path)
        var sink = writer
        _ = try Salvager(path: source, key: .passphrase("pw")).run(into: &sink, pipeline: SalvagePipeline())
        try writer.close()

        XCTAssertEqual(writer.outcome.rowsWritten, 3000)
        XCTAssertEqual(writer.outcome.objectsFailed, ["tu"])
        XCTAssertEqual(writer.outcome.issues.map(\.name), ["tu"])
        let issue = try XCTUnwrap(writer.outcome.issues.first)
        XCTAssertTrue(issue.reason.contains("UNIQUE"), issue.reason)
        // The refused CREATE INDEX ran inside the bulk load's transaction: only that statement was undone.
        XCTAssertEqual(
            try output(path, "SELECT count(*) FROM sqlite_master WHERE type = 'index';\nSELECT count(*) FROM t;"),
            "0\n3000\n")
    }

    func testRowsAdoptedFromOrphanLeavesAreInTheRebuiltIndexes() throws {
        let dir = try TemporaryDirectory()
        let source = dir.path("src.db")
        try Shell.sqlcipher(
            source, pageSize: 1024,
            rowsSQL.replacingOccurrences(of: "3000", with: "20000")
                + "CREATE UNIQUE INDEX tu ON t(u);\nCREATE INDEX tv ON t(v);")
        let truth = Set(try GroundTruth.rows(source, key: "pw", pageSize: 1024, table: "t"))
        try Damage.zeroNonRootInterior(of: "t", in: source, key: "pw", pageSize: 1024)
        let path = dir.path("out.db")
        let writer = try writer(path)
        var sink = writer
        let report = try Salvager(path: source, key: .passphrase("pw")).run(into: &sink, pipeline: SalvagePipeline())
        try writer.close()

        XCTAssertGreaterThan(report.orphanLeavesAdopted, 0, "the damage leaves rows for after the tree walk")
        XCTAssertEqual(writer.outcome.rowsWritten, 20000)
        XCTAssertEqual(Set(writer.outcome.objectsCreated), ["tu", "tv"])
        XCTAssertEqual(writer.outcome.objectsFailed, [])
        XCTAssertEqual(Set(try GroundTruth.rows(path, key: "out", table: "t")), truth)
        XCTAssertEqual(
            try output(
                path,
                "PRAGMA integrity_check;\nSELECT count(*) FROM t INDEXED BY tu WHERE u >= '';\n"
                    + "SELECT count(*) FROM t INDEXED BY tv WHERE v >= 0;"),
            "ok\n20000\n20000\n")
    }
}
