import CSQLCipher
import Foundation

/// Hand-written SQLCipher C calls, as fast as the C API allows: the limit for any layer on top.
///
/// Each workload prepares its statements once and runs bind/step/reset. Values are bound `SQLITE_STATIC`
/// with their byte counts straight from the caller's own bytes (no copy, no `strlen`), bindings are never
/// cleared (every parameter is rebound), columns are read by pointer and byte count, and a read workload
/// that Coffer runs in one read call runs in one transaction. The connection has Coffer's settings: the
/// same busy timeout and page cache, `temp_store`, `foreign_keys`, WAL with `synchronous=NORMAL`, and by default no
/// checkpoint on the commit path (Coffer checkpoints on another thread; both checkpoint the whole WAL when they close).
/// Without checkpoints raw C's WAL grows without bound while Coffer keeps its own near `checkpointThreshold` pages;
/// `autoCheckpointPages` (`--raw-wal-autocheckpoint`) gives raw C's writers SQLite's own bounded WAL instead.
final class RawConnection {
    let handle: OpaquePointer

    /// Opens `path`, keyed with `key` (a passphrase, or a raw-key spec `x'…'`) when given, plaintext
    /// otherwise. `cacheKiB` sets `PRAGMA cache_size` (nil keeps SQLite's default, 2 MiB); `autoCheckpointPages` sets a
    /// writer's `PRAGMA wal_autocheckpoint` (0: never).
    init(
        path: String, key: String?, pageSize: Int = 4096, readOnly: Bool = false, cacheKiB: Int? = nil,
        autoCheckpointPages: Int = 0
    ) throws {
        var db: OpaquePointer?
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard let db else { throw BenchError("cannot open \(path)") }
        handle = db
        // Coffer's default busy timeout: a connection opening the WAL (recovery) briefly locks the others.
        sqlite3_busy_timeout(handle, 5000)
        if let key {
            sqlite3_key(handle, key, Int32(key.utf8.count))
            // On SQLCipher 4 (SQLite 3.26 and later), SQLCipher 3's page format (HMAC-SHA1), which Coffer
            // writes on both libraries: the files are Coffer's, and both sides then do the same cipher work.
            if sqlite3_libversion_number() >= 3_026_000 { exec("PRAGMA cipher_compatibility = 3") }
            exec("PRAGMA cipher_page_size = \(pageSize)")
        }
        exec("SELECT count(*) FROM sqlite_master")
        exec("PRAGMA temp_store = MEMORY; PRAGMA foreign_keys = ON")
        if let cacheKiB { exec("PRAGMA cache_size = -\(cacheKiB)") }
        if readOnly {
            exec("PRAGMA query_only = ON")
        } else {
            exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA wal_autocheckpoint = \(autoCheckpointPages)")
        }
    }

    private var isOpen = true

    deinit { close() }

    /// Closes the connection (SQLite checkpoints the whole WAL as the last connection closes).
    func close() {
        guard isOpen else { return }
        isOpen = false
        sqlite3_close_v2(handle)
    }

    func exec(_ sql: String) {
        sqlite3_exec(handle, sql, nil, nil, nil)
    }

    /// Steps a prepared statement once, throwing unless it returns `expected`.
    func step(_ statement: OpaquePointer, expecting expected: Int32) throws {
        let code = sqlite3_step(statement)
        guard code == expected else { throw failure(code) }
    }

    func failure(_ code: Int32) -> BenchError {
        BenchError("step returned \(code): \(String(cString: sqlite3_errmsg(handle)))")
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard let statement else { throw BenchError(String(cString: sqlite3_errmsg(handle))) }
        return statement
    }

    /// Runs `body` in one read transaction (`BEGIN` … `COMMIT`).
    func inReadTransaction<T>(_ body: () throws -> T) throws -> T {
        exec("BEGIN")
        defer { exec("COMMIT") }
        return try body()
    }
}

extension RawConnection {
    /// Binds `texts` to parameters 1, 2, … of `statement` `SQLITE_STATIC` with their byte counts, straight
    /// from the strings' own UTF-8 storage, and runs `body` while the bytes are alive (it steps the
    /// statement). The caller rebinds every text parameter before the next step.
    static func withStaticText<T>(
        _ texts: [String], from first: Int32, on statement: OpaquePointer, _ body: () throws -> T
    ) rethrows -> T {
        guard let head = texts.first else { return try body() }
        var text = head
        return try text.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(statement, first, $0.baseAddress, Int32($0.count), nil)
            }
            return try withStaticText(Array(texts.dropFirst()), from: first + 1, on: statement, body)
        }
    }
}

extension BenchRow {
    /// Binds this row to a raw INSERT statement, steps it and resets it.
    ///
    /// Text and blob are bound `SQLITE_STATIC` (a nil destructor) with their byte counts, from the row's
    /// own storage: SQLite reads them in place while the statement steps, inside the closures that keep
    /// them alive. The next row rebinds every parameter, so no binding outlives its bytes in use.
    func insert(with statement: OpaquePointer, on connection: RawConnection) throws {
        var name = name
        var email = email
        sqlite3_bind_int64(statement, 1, id)
        sqlite3_bind_int64(statement, 3, age)
        sqlite3_bind_double(statement, 5, score)
        let code = name.withUTF8 { name in
            email.withUTF8 { email in
                payload.withUnsafeBytes { payload in
                    _ = name.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text(statement, 2, $0.baseAddress, Int32($0.count), nil)
                    }
                    _ = email.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text(statement, 4, $0.baseAddress, Int32($0.count), nil)
                    }
                    sqlite3_bind_blob(statement, 6, payload.baseAddress, Int32(payload.count), nil)
                    return sqlite3_step(statement)
                }
            }
        }
        sqlite3_reset(statement)
        guard code == SQLITE_DONE else { throw connection.failure(code) }
    }

    /// Reads a row from a raw statement positioned on it: each column by pointer and byte count (text
    /// before its byte count, as SQLite asks).
    init(statement: OpaquePointer) {
        func text(_ column: Int32) -> String {
            guard let bytes = sqlite3_column_text(statement, column) else { return "" }
            return String(
                decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(statement, column))), as: UTF8.self)
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
