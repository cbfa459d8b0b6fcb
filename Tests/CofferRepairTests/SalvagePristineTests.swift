import CofferTestSupport
import XCTest

@testable import CofferRepair

final class SalvagePristineTests: XCTestCase {
    private func assertMatchesGroundTruth(
        _ path: String, key: String?, pageSize: Int,
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let (sink, report) = try salvage(path, key: key)
        let msgs = Set(try GroundTruth.rows(path, key: key, pageSize: pageSize, table: "msgs"))
        let kv = Set(try GroundTruth.rows(path, key: key, pageSize: pageSize, table: "kv", withRowid: false))
        XCTAssertGreaterThan(msgs.count, 1000, file: file, line: line)
        XCTAssertEqual(sink.rowSet("msgs"), msgs, file: file, line: line)
        XCTAssertEqual(sink.rowSet("kv"), kv, file: file, line: line)
        XCTAssertEqual(report.rowsSalvaged, msgs.count + kv.count, file: file, line: line)
        XCTAssertEqual(report.rowsDropped, 0, file: file, line: line)
        XCTAssertEqual(report.pagesBadHMAC, 0, file: file, line: line)
        XCTAssertEqual(report.orphanLeavesAdopted + report.orphanLeavesInferred, 0, file: file, line: line)
        XCTAssertEqual(report.tables, ["msgs": msgs.count, "kv": kv.count], file: file, line: line)
        XCTAssertEqual(report.pageSize, pageSize, file: file, line: line)
        XCTAssertEqual(Set(sink.tables.map(\.name)), ["msgs", "kv"], file: file, line: line)
        XCTAssertTrue(sink.finished, file: file, line: line)
        // Non-UTF-8 TEXT survives byte for byte.
        XCTAssertTrue(
            sink.rowSet("msgs").contains { $0.contains(.text([0xff, 0xfe, 0x80, 0x41, 0x00, 0x42])) },
            file: file, line: line)
        // Overflowing rows (> 5 KB) are whole.
        XCTAssertTrue(
            sink.rowSet("msgs").contains { row in
                row.contains { if case .text(let bytes) = $0 { return bytes.count > 5000 } else { return false } }
            }, file: file, line: line)
    }

    func testEncryptedFileAt4096SalvagesExactly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e.db")
        try Shell.sqlcipher(path, pageSize: 4096, standardSchemaSQL)
        try assertMatchesGroundTruth(path, key: "pw", pageSize: 4096)
    }

    func testEncryptedFileAt1024SalvagesExactly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("e1k.db")
        try Shell.sqlcipher(path, pageSize: 1024, standardSchemaSQL)
        try assertMatchesGroundTruth(path, key: "pw", pageSize: 1024)
    }

    func testPlaintextFileSalvagesExactly() throws {
        let dir = try TemporaryDirectory()
        let path = dir.path("p.db")
        try Shell.run("sqlite3", path, "PRAGMA page_size=4096;\n" + standardSchemaSQL)
        try assertMatchesGroundTruth(path, key: nil, pageSize: 4096)
    }

    func testSchemaIsParsed() throws {
        let parsed = try XCTUnwrap(
            CreateTableParser.parse(
                "CREATE TABLE \"we ird\"(id INTEGER PRIMARY KEY, [b c] VARCHAR(10) NOT NULL, d, e REAL DEFAULT 1.5, f DOUBLE, g BOOLEAN, CONSTRAINT x UNIQUE(d))"
            ))
        XCTAssertEqual(parsed.name, "we ird")
        XCTAssertEqual(parsed.columns.map(\.name), ["id", "b c", "d", "e", "f", "g"])
        XCTAssertEqual(parsed.columns.map(\.affinity), [.integer, .text, .blob, .real, .real, .numeric])
        XCTAssertEqual(parsed.rowidAliasColumn, 0)
        let withoutRowid = try XCTUnwrap(
            CreateTableParser.parse(
                "CREATE TABLE kv(a TEXT, b INT, c, PRIMARY KEY(c, a)) WITHOUT ROWID"))
        XCTAssertTrue(withoutRowid.withoutRowid)
        XCTAssertEqual(withoutRowid.primaryKeyColumns, [2, 0])
        XCTAssertNil(withoutRowid.rowidAliasColumn)
        XCTAssertNil(CreateTableParser.parse("CREATE VIRTUAL TABLE f USING fts4(x)"))
        XCTAssertNil(CreateTableParser.parse("DROP TABLE x"))
        XCTAssertNil(try XCTUnwrap(CreateTableParser.parse("CREATE TABLE t(id INTEGER PRIMARY KEY DESC, x)")).rowidAliasColumn)
    }
}
