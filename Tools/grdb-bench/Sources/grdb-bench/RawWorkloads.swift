import Foundation
import GRDBSQLite

let rawTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// Hand-written C calls on the system SQLite: prepared once, bind/step/reset. The limit for GRDB.
final class RawConnection: @unchecked Sendable {
    let handle: OpaquePointer

    init(path: String, cacheKiB: Int) throws {
        var db: OpaquePointer?
        sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil)
        guard let db else { throw BenchError("cannot open \(path)") }
        handle = db
        exec("PRAGMA journal_mode = WAL")
        exec("PRAGMA synchronous = NORMAL")
        exec("PRAGMA cache_size = -\(cacheKiB)")
    }

    deinit { sqlite3_close_v2(handle) }

    func exec(_ sql: String) { sqlite3_exec(handle, sql, nil, nil, nil) }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard let statement else { throw BenchError(String(cString: sqlite3_errmsg(handle))) }
        return statement
    }

    func step(_ statement: OpaquePointer, expecting expected: Int32) throws {
        let code = sqlite3_step(statement)
        guard code == expected else { throw BenchError("step returned \(code)") }
    }
}

extension BenchRow {
    func bind(to statement: OpaquePointer) {
        sqlite3_bind_int64(statement, 1, id)
        sqlite3_bind_text(statement, 2, name, -1, rawTransient)
        sqlite3_bind_int64(statement, 3, age)
        sqlite3_bind_text(statement, 4, email, -1, rawTransient)
        sqlite3_bind_double(statement, 5, score)
        payload.withUnsafeBytes { _ = sqlite3_bind_blob(statement, 6, $0.baseAddress, Int32($0.count), rawTransient) }
    }

    init(statement: OpaquePointer) {
        func text(_ column: Int32) -> String { String(cString: sqlite3_column_text(statement, column)) }
        let blob = sqlite3_column_blob(statement, 5)
        let count = Int(sqlite3_column_bytes(statement, 5))
        self.init(
            id: sqlite3_column_int64(statement, 0), name: text(1), age: sqlite3_column_int64(statement, 2),
            email: text(3), score: sqlite3_column_double(statement, 4),
            payload: blob.map { Data(bytes: $0, count: count) } ?? Data())
    }

    func add(to sum: inout Checksum) { sum.add(id: id, age: age, score: score, name: name, email: email, payload: payload) }
}

/// W1–W6 in raw C.
struct RawWorkloads {
    let rows: [BenchRow]
    let cacheKiB: Int

    func insert(path: String, count: Int, perTransaction: Int) throws {
        let connection = try RawConnection(path: path, cacheKiB: cacheKiB)
        connection.exec(BenchRow.schema)
        try insert(rows[0..<count], perTransaction: perTransaction, connection: connection)
    }

    func insert(_ rows: ArraySlice<BenchRow>, perTransaction: Int, connection: RawConnection) throws {
        let insert = try connection.prepare(BenchRow.insertSQL)
        defer { sqlite3_finalize(insert) }
        for start in stride(from: rows.startIndex, to: rows.endIndex, by: perTransaction) {
            connection.exec("BEGIN IMMEDIATE")
            for row in rows[start..<min(rows.endIndex, start + perTransaction)] {
                row.bind(to: insert)
                try connection.step(insert, expecting: SQLITE_DONE)
                sqlite3_reset(insert)
            }
            connection.exec("COMMIT")
        }
    }

    func fetchAll(_ connection: RawConnection) throws -> Int64 {
        let statement = try connection.prepare(BenchRow.selectAllSQL)
        defer { sqlite3_finalize(statement) }
        var rows: [BenchRow] = []
        while sqlite3_step(statement) == SQLITE_ROW { rows.append(BenchRow(statement: statement)) }
        var sum = Checksum()
        rows.forEach { $0.add(to: &sum) }
        return sum.value
    }

    func lookups(_ ids: [Int64], oneTransaction: Bool, _ connection: RawConnection) throws -> Int64 {
        let statement = try connection.prepare(BenchRow.selectByIDSQL)
        defer { sqlite3_finalize(statement) }
        var sum = Checksum()
        if oneTransaction { connection.exec("BEGIN") }
        for id in ids {
            sqlite3_bind_int64(statement, 1, id)
            try connection.step(statement, expecting: SQLITE_ROW)
            BenchRow(statement: statement).add(to: &sum)
            sqlite3_reset(statement)
        }
        if oneTransaction { connection.exec("COMMIT") }
        return sum.value
    }

    func ranges(_ count: Int, _ connection: RawConnection) throws -> Int64 {
        let statement = try connection.prepare(BenchRow.rangeSQL)
        defer { sqlite3_finalize(statement) }
        var sum = Checksum()
        for index in 0..<count {
            let (low, high) = BenchRow.ageRange(index)
            sqlite3_bind_int64(statement, 1, low)
            sqlite3_bind_int64(statement, 2, high)
            while sqlite3_step(statement) == SQLITE_ROW { BenchRow(statement: statement).add(to: &sum) }
            sqlite3_reset(statement)
        }
        return sum.value
    }
}
