import CSQLCipher
import CofferEngine
import Foundation

/// Reads one column of the current row as a Swift value, checking its storage class.
///
/// It is also the `Decoder` for a value that is not a plain number or string: a raw-value enum decodes
/// its raw value through the single-value container; a type that asks for a keyed or unkeyed container
/// was stored as JSON text and is decoded from it.
struct ColumnReader: Decoder, SingleValueDecodingContainer {
    /// Not retained: a reader lives for one column read inside a decode, while the decoder that made it
    /// holds the statement. Retaining it would cost two atomic operations per column (an `unowned(unsafe)`
    /// reference still did, around each read through it; `Unmanaged` does not).
    private let unmanagedStatement: Unmanaged<Statement>
    let column: Int32
    /// The column's value in the current row, fetched once: reading its type and then its contents
    /// through `sqlite3_value_*` skips the statement and column checks each `sqlite3_column_*` call repeats.
    private let value: OpaquePointer?

    /// The statement, for the SQL an error reports (conversions read `value`).
    var statement: Statement { unmanagedStatement.takeUnretainedValue() }

    init(statement: Statement, column: Int32) {
        self.init(statement: .passUnretained(statement), value: sqlite3_column_value(statement.handle, column), column: column)
    }

    /// A reader of `value`, column `column` of a row of `statement` (read in place, or a copy of a
    /// prefetched row), made without touching a strong reference.
    init(statement: Unmanaged<Statement>, value: OpaquePointer?, column: Int32) {
        self.unmanagedStatement = statement
        self.column = column
        self.value = value
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// `SQLITE_INTEGER`, `SQLITE_FLOAT`, `SQLITE_TEXT`, `SQLITE_BLOB` or `SQLITE_NULL`.
    var storageClass: Int32 { sqlite3_value_type(value) }

    private func mismatch(_ type: Any.Type) -> CofferError {
        let stored = Statement.databaseValue(of: value)
        return CofferError(
            code: .conversionFailed,
            message: "cannot convert \(stored.typeName) in column \(column) to \(type)", sql: statement.sql)
    }

    func int64() throws -> Int64 {
        if storageClass == SQLITE_INTEGER { return sqlite3_value_int64(value) }
        guard let value = Int64.fromDatabaseValue(Statement.databaseValue(of: value)) else { throw mismatch(Int64.self) }
        return value
    }

    func integer<T: FixedWidthInteger>() throws -> T {
        guard let value = T(exactly: try int64()) else { throw mismatch(T.self) }
        return value
    }

    func double() throws -> Double {
        switch storageClass {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        default: throw mismatch(Double.self)
        }
    }

    func string() throws -> String {
        guard storageClass == SQLITE_TEXT else {
            guard let value = String.fromDatabaseValue(Statement.databaseValue(of: value)) else { throw mismatch(String.self) }
            return value
        }
        return Statement.string(of: value)
    }

    /// A `Data` column: a BLOB read at once, anything else as the generic path reads it.
    func data() throws -> Data {
        if storageClass == SQLITE_BLOB { return Statement.data(of: value) }
        return try decodeOther(Data.self)
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // The common column types first, without a protocol lookup or a dynamic cast: this generic
        // method is what a synthesized `init(from:)` reaches for `Data` (and for any type the keyed
        // container has no overload for), unspecialized, once per column per row.
        // (Types compare by ObjectIdentifier: `==` on metatypes goes through Optional's metadata.)
        let requested = ObjectIdentifier(T.self)
        if requested == ObjectIdentifier(Data.self), storageClass == SQLITE_BLOB {
            return Self.identity(Statement.data(of: value))
        }
        if requested == ObjectIdentifier(String.self) { return Self.identity(try string()) }
        if requested == ObjectIdentifier(Int64.self) { return Self.identity(try int64()) }
        if requested == ObjectIdentifier(Int.self) { return Self.identity(try integer() as Int) }
        if requested == ObjectIdentifier(Double.self) { return Self.identity(try double()) }
        return try decodeOther(type)
    }

    /// Every other type: through `DatabaseValueConvertible`, the type's own `init(from:)`, or JSON.
    ///
    /// Kept out of line: the metadata this path needs (`T?`, existentials) would otherwise be looked up at
    /// the entry of `decode` on every call, fast paths included.
    @inline(never)
    private func decodeOther<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = type as? any DatabaseValueConvertible.Type {
            let stored = Statement.databaseValue(of: value)
            guard let value = convertible.fromDatabaseValue(stored) as? T else { throw mismatch(type) }
            return value
        }
        do {
            return try T(from: self)
        } catch is NeedsJSON {
            guard storageClass == SQLITE_TEXT || storageClass == SQLITE_BLOB else { throw mismatch(type) }
            return try JSONDecoder().decode(T.self, from: Data(Statement.bytes(of: value)))
        }
    }

    /// `value` as `T`, for callers that checked `U.self == T.self`: a copy (retaining what it holds)
    /// without the runtime's dynamic cast, which costs more than reading the column.
    @inline(__always)
    private static func identity<U, T>(_ value: U) -> T {
        assert(ObjectIdentifier(U.self) == ObjectIdentifier(T.self))
        return withUnsafePointer(to: value) { UnsafeRawPointer($0).load(as: T.self) }
    }

    // MARK: Decoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw NeedsJSON() }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw NeedsJSON() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    // MARK: SingleValueDecodingContainer

    func decodeNil() -> Bool { storageClass == SQLITE_NULL }
    func decode(_ type: Bool.Type) throws -> Bool { try int64() != 0 }
    func decode(_ type: String.Type) throws -> String { try string() }
    func decode(_ type: Double.Type) throws -> Double { try double() }
    func decode(_ type: Float.Type) throws -> Float { Float(try double()) }
    func decode(_ type: Int.Type) throws -> Int { try integer() }
    func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
    func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
    func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
    func decode(_ type: Int64.Type) throws -> Int64 { try int64() }
    func decode(_ type: UInt.Type) throws -> UInt { try integer() }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
}

/// Thrown inside ``ColumnReader`` when a value asks for a container: the column holds JSON.
struct NeedsJSON: Error {}
