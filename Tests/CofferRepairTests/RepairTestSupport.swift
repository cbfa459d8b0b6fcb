// Shared helpers for CofferRepair tests: reading ground truth through the real SQLCipher library, byte
// damage, and a collecting sink (temporary directories and the shells come from CofferTestSupport).

import CSQLCipher
import CofferTestSupport
import Foundation
import XCTest

@testable import CofferRepair

/// Ground truth read through the real library from a pristine file.
enum GroundTruth {
    /// id → version from a shell's `id|v` lines (the WAL recall tests' rows carry their version).
    static func versions(_ shellRows: String) -> [Int64: Int64] {
        var result: [Int64: Int64] = [:]
        for line in shellRows.split(separator: "\n") {
            let parts = line.split(separator: "|").compactMap { Int64($0) }
            if parts.count == 2 { result[parts[0]] = parts[1] }
        }
        return result
    }

    /// All rows of `table` as `[rowid] + columns` (or just columns with `withRowid: false`).
    static func rows(
        _ path: String, key: String?, pageSize: Int = 4096, table: String,
        withRowid: Bool = true, readOnly: Bool = true
    ) throws -> [[SalvagedValue]] {
        var db: OpaquePointer?
        let flags = readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK, let db else {
            throw NSError(domain: "open", code: 1)
        }
        defer { sqlite3_close(db) }
        if let key {
            // The files are SQLCipher 3's (the 3.4.1 shell's): a SQLCipher 4 library reads them in that format.
            let compatibility = TestedSQLCipher.isVersion4 ? " PRAGMA cipher_compatibility = 3;" : ""
            try exec(db, "PRAGMA key='\(key)';\(compatibility) PRAGMA cipher_page_size=\(pageSize);")
        }
        var statement: OpaquePointer?
        let sql = "SELECT \(withRowid ? "rowid, " : "")* FROM \"\(table)\""
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw NSError(domain: String(cString: sqlite3_errmsg(db)), code: 2)
        }
        defer { sqlite3_finalize(statement) }
        var result: [[SalvagedValue]] = []
        while sqlite3_step(statement) == SQLITE_ROW {
            var row: [SalvagedValue] = []
            for column in 0..<sqlite3_column_count(statement) {
                switch sqlite3_column_type(statement, column) {
                case SQLITE_INTEGER: row.append(.integer(sqlite3_column_int64(statement, column)))
                case SQLITE_FLOAT: row.append(.real(sqlite3_column_double(statement, column)))
                case SQLITE_TEXT:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let pointer = sqlite3_column_text(statement, column)
                    row.append(.text(pointer.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []))
                case SQLITE_BLOB:
                    let count = Int(sqlite3_column_bytes(statement, column))
                    let pointer = sqlite3_column_blob(statement, column)?.assumingMemoryBound(to: UInt8.self)
                    row.append(.blob(pointer.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? []))
                default: row.append(.null)
                }
            }
            result.append(row)
        }
        return result
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else {
            throw NSError(domain: String(cString: sqlite3_errmsg(db)), code: 3)
        }
    }
}

/// Byte-level damage to files.
enum Damage {
    static func overwrite(_ path: String, at offset: UInt64, with bytes: [UInt8]) throws {
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        handle.write(Data(bytes))
    }

    /// Zero-fills page `page` (1-based).
    static func zeroPage(_ path: String, page: UInt32, pageSize: Int) throws {
        try overwrite(path, at: UInt64(page - 1) * UInt64(pageSize), with: [UInt8](repeating: 0, count: pageSize))
    }

    /// Zero-fills an interior page of `table` other than its root (the table must have a tree of three
    /// levels or more) in the pristine SQLCipher file at `path`; returns its page number.
    @discardableResult
    static func zeroNonRootInterior(of table: String, in path: String, key: String, pageSize: Int) throws -> UInt32 {
        let roles = try pageRoles(path, key: key)
        var visited = Set<UInt32>()
        let schema = Schema.read(from: try DatabaseFile(path: path, key: .passphrase(key)), visited: &visited)
        let root = try XCTUnwrap(schema.tables.first { $0.name == table }?.rootPage)
        let interior = try XCTUnwrap(
            roles.first { $0.owner == table && $0.role == .tableInterior && $0.pageNumber != root },
            "\(pageSize)-byte pages give \(table) a three-level tree")
        try zeroPage(path, page: interior.pageNumber, pageSize: pageSize)
        return interior.pageNumber
    }

    /// XORs `count` bytes at `offsetInPage` of page `page` with 0xA5.
    static func flip(_ path: String, page: UInt32, pageSize: Int, offsetInPage: Int, count: Int = 8) throws {
        let start = UInt64(page - 1) * UInt64(pageSize) + UInt64(offsetInPage)
        let handle = try XCTUnwrap(FileHandle(forUpdatingAtPath: path))
        defer { try? handle.close() }
        try handle.seek(toOffset: start)
        let original = try XCTUnwrap(handle.read(upToCount: count))
        try handle.seek(toOffset: start)
        handle.write(Data(original.map { $0 ^ 0xA5 }))
    }
}

func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

/// Runs a salvage into a collecting sink.
func salvage(_ path: String, key: String?, settings: CipherSettings = .sqlcipher3, useWAL: Bool = true) throws
    -> (sink: CollectingSink, report: RepairReport)
{
    let salvager = try Salvager(
        path: path, key: key.map { Encryption.passphrase($0) } ?? .none, settings: settings, useWAL: useWAL)
    var sink = CollectingSink()
    let report = try salvager.run(into: &sink)
    return (sink, report)
}

extension CollectingSink {
    /// Rows of `table` as `[rowid] + values` (rowid tables) or values (WITHOUT ROWID), as a set.
    func rowSet(_ table: String) -> Set<[SalvagedValue]> {
        Set((rows[table] ?? []).map { row in (row.rowid.map { [SalvagedValue.integer($0)] } ?? []) + row.values })
    }
}

/// The standard test schema: a rowid table with >5 KB overflowing rows, non-UTF-8 text, whole-number REALs
/// and deleted rows; a WITHOUT ROWID table; two indexes; a view and a trigger.
let standardSchemaSQL = """
    CREATE TABLE msgs(id INTEGER PRIMARY KEY, sender TEXT, body TEXT, score REAL, data BLOB);
    CREATE TABLE kv(k TEXT PRIMARY KEY, v INTEGER, note TEXT) WITHOUT ROWID;
    CREATE INDEX msgs_sender ON msgs(sender);
    CREATE INDEX kv_v ON kv(v);
    CREATE VIEW recent AS SELECT id, sender FROM msgs WHERE id > 100;
    CREATE TRIGGER kv_touch AFTER UPDATE ON kv BEGIN SELECT 1; END;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 1500)
    INSERT INTO msgs(sender, body, score, data)
      SELECT 'user' || (i % 7), printf('message %d %s', i, hex(randomblob(30 + i % 40))), i * 0.5, randomblob(i % 24) FROM n;
    UPDATE msgs SET body = body || hex(randomblob(3000)) WHERE id % 97 = 0;
    INSERT INTO msgs(sender, body, score, data) VALUES (CAST(x'fffe80410042' AS TEXT), CAST(x'c328a0a1' AS TEXT), NULL, NULL);
    DELETE FROM msgs WHERE id % 13 = 0;
    WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 600)
    INSERT INTO kv SELECT printf('key%05d', i), i, hex(randomblob(i % 50)) FROM n;
    DELETE FROM kv WHERE v % 11 = 0;
    """

/// Pages of a pristine file with their roles.
func pageRoles(_ path: String, key: String?) throws -> [PageInfo] {
    PageRoles.classify(try DatabaseFile(path: path, key: key.map { Encryption.passphrase($0) } ?? .none))
}

/// The rowids stored on table leaf `page` of a pristine file.
func leafRowids(_ path: String, key: String?, page: UInt32) throws -> Set<Int64> {
    let file = try DatabaseFile(path: path, key: key.map { Encryption.passphrase($0) } ?? .none)
    let parsed = try TreeWalker(source: file).parse(page).get()
    return Set(parsed.cells.compactMap(\.rowid))
}

/// For each table-leaf cell of `table` with an overflow chain: rowid → chain pages (pristine file).
func overflowChains(_ path: String, key: String?, table: String) throws -> [Int64: [UInt32]] {
    let file = try DatabaseFile(path: path, key: key.map { Encryption.passphrase($0) } ?? .none)
    var visited = Set<UInt32>()
    let schema = Schema.read(from: file, visited: &visited)
    let root = try XCTUnwrap(schema.tables.first { $0.name == table }?.rootPage)
    var result: [Int64: [UInt32]] = [:]
    let reader = OverflowReader(source: file)
    TreeWalker(source: file).walk(root: root, visited: &visited) { _, cells in
        for cell in cells {
            guard let first = cell.overflowPage, let rowid = cell.rowid,
                case .success(let chain) = reader.read(first: first, remaining: cell.payloadSize - cell.localPayload.count)
            else { continue }
            result[rowid] = chain.pages
        }
    }
    return result
}
