// LibraryReader — reads rows through the real SQLCipher library (ground truth and repair output), byte exact:
// TEXT comes back as its stored bytes, so a non-UTF-8 or altered byte is never hidden by a String decode.

import CSQLCipher
import CofferRepair
import Foundation

enum LibraryReader {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Every row of `sql` run on `path` (keyed with `key` and `pageSize` when `key` is not nil).
    static func rows(_ path: String, key: String?, pageSize: Int, sql: String) throws -> [[SalvagedValue]] {
        var handle: OpaquePointer?
        guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READONLY, nil) == SQLITE_OK, let db = handle else {
            sqlite3_close(handle)
            throw Failure(description: "cannot open \(path)")
        }
        defer { sqlite3_close(db) }
        if let key {
            let escaped = key.replacingOccurrences(of: "'", with: "''")
            // The corpus and repair's output are in SQLCipher 3's page format: a SQLCipher 4 library reads them so.
            let compatibility = sqlite3_libversion_number() >= 3_026_000 ? " PRAGMA cipher_compatibility = 3;" : ""
            let sql = "PRAGMA key='\(escaped)';\(compatibility) PRAGMA cipher_page_size=\(pageSize);"
            guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK
            else { throw Failure(description: String(cString: sqlite3_errmsg(db))) }
        }
        var prepared: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &prepared, nil) == SQLITE_OK, let statement = prepared else {
            throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(db)))")
        }
        defer { sqlite3_finalize(statement) }
        var result: [[SalvagedValue]] = []
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw Failure(description: "\(sql): \(String(cString: sqlite3_errmsg(db)))") }
            result.append((0..<sqlite3_column_count(statement)).map { value(statement, $0) })
        }
        return result
    }

    /// Names of the ordinary tables of `path` (sqlite_* excluded).
    static func tableNames(_ path: String, key: String?, pageSize: Int) throws -> [String] {
        try rows(
            path, key: key, pageSize: pageSize,
            sql: "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        )
        .compactMap { row in
            if case .text(let bytes)? = row.first { return String(decoding: bytes, as: UTF8.self) }
            return nil
        }
    }

    private static func value(_ statement: OpaquePointer, _ column: Int32) -> SalvagedValue {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(statement, column))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, column))
        case SQLITE_TEXT:
            let count = Int(sqlite3_column_bytes(statement, column))
            return .text(sqlite3_column_text(statement, column).map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(statement, column))
            let pointer = sqlite3_column_blob(statement, column)?.assumingMemoryBound(to: UInt8.self)
            return .blob(pointer.map { Array(UnsafeBufferPointer(start: $0, count: count)) } ?? [])
        default: return .null
        }
    }
}
