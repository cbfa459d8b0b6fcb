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
        try assertMatchesGroundTruth(path, key: .none, pageSize: 4096)
    }

    func testSchemaIsReadBySQLite() throws {
        let reader = CreateStatementReader()
        let parsed = try XCTUnwrap(
            reader.table(
                sql:
                    "CREATE TABLE \"we ird\"(id INTEGER PRIMARY KEY, [b c] VARCHAR(10) NOT NULL, d, e REAL DEFAULT 1.5, f DOUBLE, g BOOLEAN, CONSTRAINT x UNIQUE(d))",
                name: "we ird"))
        XCTAssertEqual(parsed.name, "we ird")
        XCTAssertEqual(parsed.columns.map(\.name), ["id", "b c", "d", "e", "f", "g"])
        XCTAssertEqual(parsed.columns.map(\.affinity), [.integer, .text, .blob, .real, .real, .numeric])
        XCTAssertEqual(parsed.rowidAliasColumn, 0)
        let withoutRowid = try XCTUnwrap(
            reader.table(sql: "CREATE TABLE kv(a TEXT, b INT, c, PRIMARY KEY(c, a)) WITHOUT ROWID", name: "kv"))
        XCTAssertTrue(withoutRowid.withoutRowid)
        XCTAssertEqual(withoutRowid.primaryKeyColumns, [2, 0])
        XCTAssertNil(withoutRowid.rowidAliasColumn)
        XCTAssertNil(reader.table(sql: "CREATE VIRTUAL TABLE f USING fts4(x)", name: "f"))
        XCTAssertNil(reader.table(sql: "DROP TABLE x", name: "x"))
        XCTAssertNil(
            try XCTUnwrap(reader.table(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY DESC, x)", name: "t")).rowidAliasColumn)
        let textKey = try XCTUnwrap(reader.table(sql: "CREATE TABLE t(id TEXT PRIMARY KEY, x)", name: "t"))
        XCTAssertFalse(textKey.withoutRowid)
        XCTAssertNil(textKey.rowidAliasColumn)
        // An FTS4 shadow table declares its columns as string literals; SQLite reads them as names.
        let shadow = try XCTUnwrap(
            reader.table(
                sql: "CREATE TABLE 'note_content'(docid INTEGER PRIMARY KEY, 'c0title', 'c1text')", name: "note_content"))
        XCTAssertEqual(shadow.columns.map(\.name), ["docid", "c0title", "c1text"])
        XCTAssertEqual(shadow.rowidAliasColumn, 0)
        let quoted = try XCTUnwrap(
            reader.table(
                sql:
                    "CREATE TABLE `select`(\"a\"\"b\" NUMERIC(10, 2) CHECK (\"a\"\"b\" > abs(-1) AND 1 IN (1, 2)) DEFAULT (round(1.5, 1)), [from] TEXT COLLATE NOCASE, `ключ` INTEGER, 'x''y')",
                name: "select"))
        XCTAssertEqual(quoted.columns.map(\.name), ["a\"b", "from", "ключ", "x'y"])
        XCTAssertEqual(quoted.columns.map(\.declaredType), ["NUMERIC(10, 2)", "TEXT", "INTEGER", ""])
        // SQLite's own tables have reserved names; SQLCipher 4's SQLite writes sqlite_stat4, 3.15 has none.
        let stat4 = try XCTUnwrap(
            reader.table(sql: "CREATE TABLE sqlite_stat4(tbl,idx,neq,nlt,ndlt,sample)", name: "sqlite_stat4"))
        XCTAssertEqual(stat4.name, "sqlite_stat4")
        XCTAssertEqual(stat4.columns.map(\.name), ["tbl", "idx", "neq", "nlt", "ndlt", "sample"])
        XCTAssertEqual(
            try XCTUnwrap(reader.table(sql: "CREATE TABLE sqlite_sequence(name,seq)", name: "sqlite_sequence")).columns.count, 2)
        XCTAssertNil(reader.table(sql: "CREATE TABLE sqlite_x(a); ATTACH 'x' AS y", name: "sqlite_x"))
    }

    func testVirtualTablesAreReadBySQLite() throws {
        let reader = CreateStatementReader()
        let fts = try XCTUnwrap(
            reader.virtualTable(sql: "CREATE VIRTUAL TABLE note USING fts4(title, body, tokenize=porter)", name: "note"))
        XCTAssertEqual(fts.module, "fts4")
        XCTAssertTrue(fts.isAvailable)
        XCTAssertEqual(fts.shadowTables, ["note_content", "note_segments", "note_segdir", "note_docsize", "note_stat"])
        let rtree = try XCTUnwrap(reader.virtualTable(sql: "CREATE VIRTUAL TABLE geo USING rtree(id, x0, x1)", name: "geo"))
        // SQLite 3.49 lists R*Tree's shadow tables in another order than 3.15.
        XCTAssertEqual(Set(rtree.shadowTables), ["geo_node", "geo_rowid", "geo_parent"])
        let fts5 = try XCTUnwrap(reader.virtualTable(sql: "CREATE VIRTUAL TABLE n5 USING fts5(body)", name: "n5"))
        XCTAssertEqual(fts5.module, "fts5")
        if TestedSQLCipher.isVersion4 {
            XCTAssertTrue(fts5.isAvailable, "SQLCipher 4.9 has FTS5")
        } else {
            XCTAssertFalse(fts5.isAvailable)
            XCTAssertEqual(fts5.unavailableReason, "no such module: fts5")
        }
        let icu = try XCTUnwrap(reader.virtualTable(sql: "CREATE VIRTUAL TABLE w USING fts4(x, tokenize=icu)", name: "w"))
        XCTAssertEqual(icu.module, "fts4")
        XCTAssertFalse(icu.isAvailable)
        XCTAssertEqual(icu.unavailableReason, "unknown tokenizer: icu")
        XCTAssertNil(reader.virtualTable(sql: "CREATE VIRTUAL TABLE other USING fts4(x)", name: "note"))
    }
}
