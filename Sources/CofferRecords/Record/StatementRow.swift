import CSQLCipher
import CofferEngine
import Foundation

/// The current row of a statement, read in place by column position: what the record reader that
/// `@Table` generates (`init(statementRow:)`) reads each property from.
///
/// Each column is converted exactly as the Codable path converts it (the same readers, the same
/// storage-class checks and errors); only the key lookups and the container boxes are gone. Positions
/// count from the record's first column, in ``TableRecord/columnDefinitions`` order, which is the order
/// Coffer selects a record's columns in.
///
/// You rarely use it yourself; a hand-written reader for a type `@Table` cannot generate one for looks
/// like this:
///
/// ```swift
/// extension Player {
///     init(statementRow row: StatementRow) throws {
///         self.init(id: try row.decodeIfPresent(Int64.self, at: 0), name: try row.decode(String.self, at: 1))
///     }
/// }
/// ```
///
/// A row is valid only during the call it is handed to.
///
/// The readers of plain types are inlinable: the generated reader lives in the record's module, and each
/// column of the common storage class costs what reading it by hand through SQLite's C API costs (the
/// value's storage class checked, then read in place). A value of another storage class takes the
/// out-of-line path, which converts or throws exactly as ``ColumnReader`` does.
public struct StatementRow {
    /// Not retained: a row lives for one record's decode, while the fetch that made it holds the decoder.
    unowned(unsafe) let decoder: StatementDecoder
    // Copied from the decoder once per row: reading them through `decoder` retained and released it
    // around every column.
    private let statement: Unmanaged<Statement>
    @usableFromInline let handle: OpaquePointer
    @usableFromInline let base: Int

    @usableFromInline
    init(decoder: StatementDecoder) {
        self.decoder = decoder
        self.statement = .passUnretained(decoder.statement)
        self.handle = decoder.handle
        self.base = decoder.base
    }

    private func reader(_ index: Int) -> ColumnReader {
        ColumnReader(statement: statement, value: value(at: index), column: Int32(base + index))
    }

    /// The SQLite value at `index`, read in place.
    @inlinable @inline(__always)
    func value(at index: Int) -> OpaquePointer? { sqlite3_column_value(handle, Int32(base + index)) }

    // MARK: Non-optional values

    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Bool.Type, at index: Int) throws -> Bool { try decode(Int64.self, at: index) != 0 }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: String.Type, at index: Int) throws -> String {
        let value = value(at: index)
        guard sqlite3_value_type(value) == SQLITE_TEXT else { return try converted(type, at: index) }
        return Statement.string(of: value)
    }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Double.Type, at index: Int) throws -> Double {
        let value = value(at: index)
        switch sqlite3_value_type(value) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        default: return try converted(type, at: index)
        }
    }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Float.Type, at index: Int) throws -> Float { Float(try decode(Double.self, at: index)) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Int.Type, at index: Int) throws -> Int { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Int8.Type, at index: Int) throws -> Int8 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Int16.Type, at index: Int) throws -> Int16 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Int32.Type, at index: Int) throws -> Int32 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: Int64.Type, at index: Int) throws -> Int64 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: UInt.Type, at index: Int) throws -> UInt { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: UInt8.Type, at index: Int) throws -> UInt8 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: UInt16.Type, at index: Int) throws -> UInt16 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: UInt32.Type, at index: Int) throws -> UInt32 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL.
    @inlinable @inline(__always)
    public func decode(_ type: UInt64.Type, at index: Int) throws -> UInt64 { try integer(type, at: index) }
    /// The value at `index`, which must not be NULL (a BLOB; other storage converts as `Data` decodes).
    @inlinable @inline(__always)
    public func decode(_ type: Data.Type, at index: Int) throws -> Data {
        let value = value(at: index)
        guard sqlite3_value_type(value) == SQLITE_BLOB else { return try converted(type, at: index) }
        return Statement.data(of: value)
    }
    /// The value at `index` of any other type (`Data`, `Date`, raw-value enums, JSON-stored values…).
    public func decode<T: Decodable>(_ type: T.Type, at index: Int) throws -> T { try reader(index).decode(type) }

    // MARK: Optional values

    /// The value at `index`, or nil when it is NULL: an optional property.
    @inlinable @inline(__always)
    public func decodeIfPresent(_ type: Int64.Type, at index: Int) throws -> Int64? {
        let value = value(at: index)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return sqlite3_value_int64(value)
        case SQLITE_NULL: return nil
        default: return try converted(type, at: index)
        }
    }
    /// The value at `index`, or nil when it is NULL: an optional property.
    @inlinable @inline(__always)
    public func decodeIfPresent(_ type: Int.Type, at index: Int) throws -> Int? {
        let value = value(at: index)
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER: return try Int(exactly: sqlite3_value_int64(value)) ?? converted(type, at: index)
        case SQLITE_NULL: return nil
        default: return try converted(type, at: index)
        }
    }
    /// The value at `index`, or nil when it is NULL: an optional property.
    @inlinable @inline(__always)
    public func decodeIfPresent(_ type: String.Type, at index: Int) throws -> String? {
        let value = value(at: index)
        switch sqlite3_value_type(value) {
        case SQLITE_TEXT: return Statement.string(of: value)
        case SQLITE_NULL: return nil
        default: return try converted(type, at: index)
        }
    }
    /// The value at `index`, or nil when it is NULL: an optional property.
    @inlinable @inline(__always)
    public func decodeIfPresent(_ type: Double.Type, at index: Int) throws -> Double? {
        let value = value(at: index)
        switch sqlite3_value_type(value) {
        case SQLITE_FLOAT, SQLITE_INTEGER: return sqlite3_value_double(value)
        case SQLITE_NULL: return nil
        default: return try converted(type, at: index)
        }
    }
    /// The value at `index`, or nil when it is NULL: an optional property of any other type.
    public func decodeIfPresent<T: Decodable>(_ type: T.Type, at index: Int) throws -> T? {
        let reader = reader(index)
        guard reader.storageClass != SQLITE_NULL else { return nil }
        return try reader.decode(type)
    }

    // MARK: Conversions

    /// An integer column that fits `T`, read in place; anything else converts or throws out of line.
    @inlinable @inline(__always)
    func integer<T: FixedWidthInteger>(_ type: T.Type, at index: Int) throws -> T {
        let value = value(at: index)
        if sqlite3_value_type(value) == SQLITE_INTEGER, let integer = T(exactly: sqlite3_value_int64(value)) {
            return integer
        }
        return try converted(type, at: index)
    }

    // The paths for a value of another storage class (or out of range): converted as ColumnReader
    // converts it, or a `conversionFailed` error. Out of line, so that the inlined readers stay small.

    @usableFromInline @inline(never)
    func converted<T: FixedWidthInteger>(_ type: T.Type, at index: Int) throws -> T { try reader(index).integer() }
    @usableFromInline @inline(never)
    func converted(_ type: Double.Type, at index: Int) throws -> Double { try reader(index).double() }
    @usableFromInline @inline(never)
    func converted(_ type: String.Type, at index: Int) throws -> String { try reader(index).string() }
    @usableFromInline @inline(never)
    func converted(_ type: Data.Type, at index: Int) throws -> Data { try reader(index).data() }
}
