import CSQLCipher
import Foundation

/// SQLite's "copy the value now" destructor, which the C macro `SQLITE_TRANSIENT` spells as `-1`.
let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A compiled SQL statement: bind values, step through rows, read columns.
///
/// Statements belong to one ``Connection`` and are used on its queue only. Most code never touches them:
/// ``Connection/execute(sql:arguments:)`` and the fetch methods prepare, cache and reuse them.
///
/// ```swift
/// let statement = try db.cachedStatement(sql: "SELECT name FROM player WHERE score > ?")
/// try statement.bind([100])
/// while try statement.step() {
///     print(statement.string(at: 0))
/// }
/// ```
public final class Statement {
    /// The SQLite statement handle.
    public let handle: OpaquePointer
    /// The SQL the statement was compiled from.
    public let sql: String
    @usableFromInline unowned let connection: Connection
    /// The connection's counts of rows and statements (kept here: reading it through `connection` would
    /// retain).
    private let counter: StepCounter
    /// True while a cached statement is handed out, so that reentrant use prepares a fresh one.
    ///
    /// Kept in an unchecked private slot, like the connection's own per-transaction slots: a statement is
    /// used only by its connection's one thread at a time (the writer queue, or a reader checked out of
    /// the pool). Reached through accessors compiled here: another module (the record layer) touching
    /// the stored property itself would check each access dynamically (swift_beginAccess, about 75
    /// instructions, three times a lookup in callgrind's W4b).
    package var isInUse: Bool {
        get { inUse }
        set { inUse = newValue }
    }
    @exclusivity(unchecked) private var inUse = false

    /// Resets the statement and marks it free for the next execution, in one call from the record layer.
    package func checkIn() {
        inUse = false
        sqlite3_reset(handle)
    }

    /// The number of result columns.
    public let columnCount: Int

    /// The result column names.
    public private(set) lazy var columnNames: [String] = (0..<columnCount).map {
        String(cString: sqlite3_column_name(handle, Int32($0)))
    }

    /// Column name lookup shared by every ``Row`` this statement produces.
    lazy var rowLayout = RowLayout(names: columnNames)

    /// A slot the record layer keeps the decoder of the last record type fetched with this statement in
    /// (`StatementDecoder.forRecord`), typed loosely so that the connection layer does not depend on it.
    package var recordDecoder: AnyObject? {
        get { decoderSlot }
        set { decoderSlot = newValue }
    }
    /// Unchecked and private for the reason ``isInUse``'s slot is.
    @exclusivity(unchecked) private var decoderSlot: AnyObject?

    init(connection: Connection, sql: String) throws {
        var statement: OpaquePointer?
        // `tail` points into the C string given to prepare, so it is only read while that string lives:
        // an implicitly bridged `sql` argument may be a temporary copy freed when the call returns.
        let (code, hasTrailingSQL) = sql.withCString { cString -> (Int32, Bool) in
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v2(connection.handle, cString, -1, &statement, &tail)
            return (code, tail.map { !Statement.isBlank($0) } ?? false)
        }
        guard code == SQLITE_OK, let statement else {
            throw connection.failure(code: code, sql: sql)
        }
        // One statement per call: trailing SQL (other than whitespace and comments) is refused, so a
        // hand-written statement can never carry a second one.
        if hasTrailingSQL {
            sqlite3_finalize(statement)
            throw CofferError(code: .misuse, message: "only one SQL statement is allowed", sql: sql)
        }
        self.handle = statement
        self.sql = sql
        self.connection = connection
        self.counter = connection.stepCounter
        self.columnCount = Int(sqlite3_column_count(statement))
    }

    deinit { sqlite3_finalize(handle) }

    private static func isBlank(_ tail: UnsafePointer<CChar>) -> Bool {
        var rest = String(cString: tail)[...]
        while true {
            rest = rest.drop(while: { $0.isWhitespace || $0 == ";" })
            if rest.hasPrefix("--") {
                rest = rest.drop(while: { $0 != "\n" })
            } else if rest.hasPrefix("/*") {
                guard let end = rest.range(of: "*/") else { return false }
                rest = rest[end.upperBound...]
            } else {
                return rest.isEmpty
            }
        }
    }

    // MARK: Binding

    /// Clears previous bindings and binds `arguments` to the parameters in order.
    public func bind(_ arguments: StatementArguments) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.values.count == expected else {
            throw CofferError(
                code: .range,
                message: "statement expects \(expected) arguments, got \(arguments.values.count)",
                sql: sql)
        }
        // Every parameter is bound below, so no earlier binding survives: no sqlite3_clear_bindings needed.
        for (offset, value) in arguments.values.enumerated() {
            try bind(value, toParameter: offset + 1)
        }
    }

    /// Binds `arguments` and runs `body` with them bound: text and blobs in place, from the bytes
    /// `arguments` holds (`SQLITE_STATIC`, no copy), for exactly as long as `body` runs. Then the
    /// statement is reset and those parameters cleared, so it never keeps a pointer past the call.
    func withBound(_ arguments: StatementArguments, _ body: () throws -> Void) throws {
        let expected = Int(sqlite3_bind_parameter_count(handle))
        guard arguments.values.count == expected else {
            throw CofferError(
                code: .range, message: "statement expects \(expected) arguments, got \(arguments.values.count)", sql: sql)
        }
        var bytesBound = false
        defer {
            if bytesBound { resetClearingBindings() } else { sqlite3_reset(handle) }
        }
        try bindInPlace(arguments.values, from: 0, parameter: 1, bytesBound: &bytesBound, body)
    }

    /// ``withBound(_:_:)`` for a body with a result. The result is moved out of a one-value allocation:
    /// with `T` generic (a caller generic over a record type), an optional of it, a variable the body
    /// captures or a temporary stack allocation each cost a runtime metadata lookup (or a heap box) per
    /// call, more than the allocation; the binding itself then runs specialized for the arguments.
    func withBound<T>(_ arguments: StatementArguments, _ body: () throws -> T) throws -> T {
        let slot = UnsafeMutablePointer<T>.allocate(capacity: 1)
        defer { slot.deallocate() }
        var ran = false
        try withBound(arguments) {
            slot.initialize(to: try body())
            ran = true
        }
        // `bindInPlace` runs its body once unless something throws: always true here.
        guard ran else {
            throw CofferError(code: .internal, message: "statement arguments bound without running", sql: sql)
        }
        return slot.move()
    }

    /// Binds `value` to the parameter at `position` (from 1) and runs `body`: text and blobs in place,
    /// from `value`'s own bytes (`SQLITE_STATIC`), valid for exactly as long as `body` runs. The caller
    /// resets the statement and clears its bindings before those bytes can go away.
    @inlinable
    package func withBound<T>(_ value: DatabaseValue, at position: Int32, _ body: () throws -> T) throws -> T {
        let code: Int32
        switch value {
        case .text(let text): return try withBound(text: text, at: position, body)
        case .blob(let data): return try withBound(blob: data, at: position, body)
        case .integer(let int): code = sqlite3_bind_int64(handle, position, int)
        case .real(let double): code = sqlite3_bind_double(handle, position, double)
        case .null: code = sqlite3_bind_null(handle, position)
        }
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
        return try body()
    }

    /// Binds `text` in place to the parameter at `position` while `body` runs (an empty string is
    /// copied: SQLite would read a missing pointer as NULL).
    @inlinable
    package func withBound<T>(text: String, at position: Int32, _ body: () throws -> T) throws -> T {
        // A native string lends its UTF-8 without a copy or a mutable access; a bridged one is made native.
        if let result = try text.utf8.withContiguousStorageIfAvailable({ try withBound(utf8: $0, at: position, body) }) {
            return result
        }
        var native = text
        return try native.withUTF8 { try withBound(utf8: $0, at: position, body) }
    }

    @inlinable
    package func withBound<T>(utf8 bytes: UnsafeBufferPointer<UInt8>, at position: Int32, _ body: () throws -> T) throws -> T {
        try bindInPlace(UnsafeRawBufferPointer(bytes), isBlob: false, toParameter: Int(position))
        return try body()
    }

    /// Binds `data` in place to the parameter at `position` while `body` runs (an empty blob is bound
    /// as a zero-length blob, never NULL).
    @inlinable
    package func withBound<T>(blob data: Data, at position: Int32, _ body: () throws -> T) throws -> T {
        try data.withUnsafeBytes { bytes in
            try bindInPlace(bytes, isBlob: true, toParameter: Int(position))
            return try body()
        }
    }

    /// Binds one value to the parameter at `index`, counted from 1 as SQLite does.
    public func bind(_ value: DatabaseValue, toParameter index: Int) throws {
        let position = Int32(index)
        let code: Int32
        switch value {
        case .null:
            code = sqlite3_bind_null(handle, position)
        case .integer(let int):
            return try bind(integer: int, toParameter: index)
        case .real(let double):
            return try bind(real: double, toParameter: index)
        case .text(let text):
            return try bind(text: text, toParameter: index)
        case .blob(let data):
            code = data.withUnsafeBytes { bindBlob($0, position) }
        }
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Binds an INTEGER to the parameter at `index`, counted from 1.
    public func bind(integer: Int64, toParameter index: Int) throws {
        let code = sqlite3_bind_int64(handle, Int32(index), integer)
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Binds a REAL to the parameter at `index`, counted from 1.
    public func bind(real: Double, toParameter index: Int) throws {
        let code = sqlite3_bind_double(handle, Int32(index), real)
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Binds TEXT to the parameter at `index`, counted from 1 (SQLite keeps its own copy).
    public func bind(text: String, toParameter index: Int) throws {
        var text = text
        let code = text.withUTF8 { bindText($0, Int32(index)) }
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Binds TEXT given as raw bytes, stored exactly as given even when they are not valid UTF-8.
    ///
    /// Repair uses this to carry damaged text byte for byte; a Swift `String` would replace invalid
    /// sequences with U+FFFD.
    public func bindText(bytes: UnsafeRawBufferPointer, toParameter index: Int) throws {
        let code = bindText(bytes.assumingMemoryBound(to: UInt8.self), Int32(index))
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Binds a BLOB given as raw bytes, without wrapping them in `Data` first. An empty buffer binds an
    /// empty BLOB, never NULL.
    public func bindBlob(bytes: UnsafeRawBufferPointer, toParameter index: Int) throws {
        let code = bindBlob(bytes, Int32(index))
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Binds raw TEXT (or, with `isBlob`, BLOB) bytes in place (`SQLITE_STATIC`: no copy). The caller
    /// keeps `bytes` alive and unchanged until it has stepped the statement and called
    /// ``resetClearingBindings()``, inside the scope that owns them. Record writes bind through it, and so
    /// does repair's bulk load, where copying each value into SQLite cost about a tenth of the writer's
    /// instructions.
    @usableFromInline
    package func bindInPlace(_ bytes: UnsafeRawBufferPointer, isBlob: Bool, toParameter index: Int) throws {
        let position = Int32(index)
        let code: Int32
        if let base = bytes.baseAddress, bytes.count > 0 {
            code =
                isBlob
                ? sqlite3_bind_blob(handle, position, base, Int32(bytes.count), nil)
                : sqlite3_bind_text(handle, position, base.assumingMemoryBound(to: CChar.self), Int32(bytes.count), nil)
        } else {
            // Nothing to copy: an empty value is bound as the other binders bind it.
            code = isBlob ? bindBlob(bytes, position) : bindText(UnsafeBufferPointer(start: nil, count: 0), position)
        }
        guard code == SQLITE_OK else { throw connection.failure(code: code, sql: sql) }
    }

    /// Resets the statement and clears every binding, so that no pointer bound in place outlives its bytes.
    package func resetClearingBindings() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    private func bindText(_ bytes: UnsafeBufferPointer<UInt8>, _ position: Int32) -> Int32 {
        // An empty buffer may have no base address, and a NULL pointer would bind SQL NULL.
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return sqlite3_bind_text(handle, position, "", 0, transientDestructor)
        }
        return base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
            sqlite3_bind_text(handle, position, $0, Int32(bytes.count), transientDestructor)
        }
    }

    private func bindBlob(_ bytes: UnsafeRawBufferPointer, _ position: Int32) -> Int32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else {
            return sqlite3_bind_zeroblob(handle, position, 0)
        }
        return sqlite3_bind_blob(handle, position, base, Int32(bytes.count), transientDestructor)
    }

    // MARK: Stepping

    /// Advances to the next row; returns false when the statement is done.
    @discardableResult
    public func step() throws -> Bool {
        let counting = counter.isCounting
        if counting && sqlite3_stmt_busy(handle) == 0 { counter.statementStarts() }
        let code = sqlite3_step(handle)
        switch code {
        case SQLITE_ROW:
            counter.rows &+= 1
            return true
        case SQLITE_DONE:
            if counting { counter.statementFinished(connection.handle) }
            return false
        default:
            let error = connection.failure(code: code, sql: sql)
            sqlite3_reset(handle)
            if counting { counter.statementFinished(connection.handle) }
            throw error
        }
    }

    /// Resets the statement so it can run again; bindings are kept.
    public func reset() {
        sqlite3_reset(handle)
    }

    /// Binds `arguments`, runs the statement to completion and resets it.
    ///
    /// Text and blobs are bound in place for the run and cleared after it (see ``bind(_:)`` to keep
    /// values bound across runs).
    public func execute(_ arguments: StatementArguments = []) throws {
        try withBound(arguments) { while try step() {} }
    }

    // MARK: Columns (0-based)

    /// True when the column of the current row is NULL.
    public func isNull(at column: Int) -> Bool {
        sqlite3_column_type(handle, Int32(column)) == SQLITE_NULL
    }

    /// The column as a 64-bit integer (SQLite's own conversion rules apply).
    public func int64(at column: Int) -> Int64 { sqlite3_column_int64(handle, Int32(column)) }

    /// The column as a double.
    public func double(at column: Int) -> Double { sqlite3_column_double(handle, Int32(column)) }

    /// The column as a string (empty for NULL).
    public func string(at column: Int) -> String { Self.string(of: sqlite3_column_value(handle, Int32(column))) }

    /// The column's bytes exactly as stored (TEXT or BLOB), without any UTF-8 interpretation.
    public func bytes(at column: Int) -> [UInt8] { Self.bytes(of: sqlite3_column_value(handle, Int32(column))) }

    /// The column as Data (empty for NULL).
    public func data(at column: Int) -> Data { Self.data(of: sqlite3_column_value(handle, Int32(column))) }

    /// A column value's text as a string (empty for NULL). Text before its length, as SQLite asks:
    /// reading the text may convert the value. Inlinable: the record reader `@Table` generates reads
    /// each text column through it from the client's module.
    @inlinable
    package static func string(of value: OpaquePointer?) -> String {
        guard let text = sqlite3_value_text(value) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(value))), as: UTF8.self)
    }

    /// A column value's bytes as Data (empty for NULL). Inlinable, as `string(of:)` is.
    @inlinable
    package static func data(of value: OpaquePointer?) -> Data {
        guard let bytes = sqlite3_value_blob(value) else { return Data() }
        return Data(bytes: bytes, count: Int(sqlite3_value_bytes(value)))
    }

    /// The column as a ``DatabaseValue`` of its stored type.
    public func value(at column: Int) -> DatabaseValue { Self.databaseValue(of: sqlite3_column_value(handle, Int32(column))) }

    /// A column value (or a copy of one) as a ``DatabaseValue`` of its stored type.
    package static func databaseValue(of value: OpaquePointer?) -> DatabaseValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT: return .real(sqlite3_value_double(value))
        case SQLITE_TEXT: return .text(string(of: value))
        case SQLITE_BLOB: return .blob(data(of: value))
        default: return .null
        }
    }

    /// A column value's bytes exactly as stored (TEXT or BLOB), without any UTF-8 interpretation.
    package static func bytes(of value: OpaquePointer?) -> [UInt8] {
        let base: UnsafeRawPointer? =
            sqlite3_value_type(value) == SQLITE_TEXT
            ? sqlite3_value_text(value).map { UnsafeRawPointer($0) } : sqlite3_value_blob(value)
        let count = Int(sqlite3_value_bytes(value))
        guard let base, count > 0 else { return [] }
        return [UInt8](UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Decodes the column into a Swift value, throwing ``CofferError/conversionFailed`` when it cannot.
    public func decode<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self, at column: Int) throws -> Value {
        let stored = value(at: column)
        guard let converted = Value.fromDatabaseValue(stored) else {
            throw CofferError(
                code: .conversionFailed,
                message: "cannot convert \(stored.typeName) in column \(column) to \(Value.self)",
                sql: sql)
        }
        return converted
    }

    /// A copy of the current row.
    public func row() -> Row {
        Row(layout: rowLayout, values: (0..<columnCount).map { value(at: $0) })
    }
}

extension DatabaseValue {
    /// The storage class name, for messages (never the value itself).
    package var typeName: String {
        switch self {
        case .null: return "NULL"
        case .integer: return "INTEGER"
        case .real: return "REAL"
        case .text: return "TEXT"
        case .blob: return "BLOB"
        }
    }
}
