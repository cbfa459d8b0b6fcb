import CSQLCipher
import Foundation

/// Hand-written SQLCipher C calls: prepared once, bind/step/reset, no error-path overhead. The limit
/// for any layer on top.
final class RawConnection {
    let handle: OpaquePointer

    /// Opens `path`, keyed with `key` (a passphrase, or a raw-key spec `x'…'`) when given.
    /// `cacheKiB` sets `PRAGMA cache_size` (nil keeps SQLite's default, 2 MiB).
    init(path: String, key: String?, pageSize: Int = 4096, readOnly: Bool = false, cacheKiB: Int? = nil) throws {
        var db: OpaquePointer?
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard let db else { throw BenchError("cannot open \(path)") }
        handle = db
        if let key {
            sqlite3_key(handle, key, Int32(key.utf8.count))
            exec("PRAGMA cipher_page_size = \(pageSize)")
        }
        exec("SELECT count(*) FROM sqlite_master")
        if let cacheKiB { exec("PRAGMA cache_size = -\(cacheKiB)") }
        if !readOnly {
            exec("PRAGMA journal_mode = WAL")
            exec("PRAGMA synchronous = NORMAL")
        }
    }

    deinit { sqlite3_close_v2(handle) }

    func exec(_ sql: String) {
        sqlite3_exec(handle, sql, nil, nil, nil)
    }

    /// Steps a prepared statement once, throwing unless it returns `expected`.
    func step(_ statement: OpaquePointer, expecting expected: Int32) throws {
        let code = sqlite3_step(statement)
        guard code == expected else { throw BenchError("step returned \(code): \(String(cString: sqlite3_errmsg(handle)))") }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard let statement else { throw BenchError(String(cString: sqlite3_errmsg(handle))) }
        return statement
    }
}

let rawTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

extension BenchRow {
    /// Binds this row to a raw INSERT statement.
    func bind(to statement: OpaquePointer) {
        sqlite3_bind_int64(statement, 1, id)
        sqlite3_bind_text(statement, 2, name, -1, rawTransient)
        sqlite3_bind_int64(statement, 3, age)
        sqlite3_bind_text(statement, 4, email, -1, rawTransient)
        sqlite3_bind_double(statement, 5, score)
        payload.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 6, $0.baseAddress, Int32($0.count), rawTransient) }
    }

    /// Reads a row from a raw statement positioned on it.
    init(statement: OpaquePointer) {
        func text(_ column: Int32) -> String {
            String(cString: sqlite3_column_text(statement, column))
        }
        let blob = sqlite3_column_blob(statement, 5)
        let count = Int(sqlite3_column_bytes(statement, 5))
        self.init(
            id: sqlite3_column_int64(statement, 0),
            name: text(1),
            age: sqlite3_column_int64(statement, 2),
            email: text(3),
            score: sqlite3_column_double(statement, 4),
            payload: blob.map { Data(bytes: $0, count: count) } ?? Data())
    }
}
