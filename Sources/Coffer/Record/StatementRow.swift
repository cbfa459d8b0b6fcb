import CSQLCipher
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
public struct StatementRow {
    /// Not retained: a row lives for one record's decode, while the fetch that made it holds the decoder.
    unowned(unsafe) let decoder: StatementDecoder
    // Copied from the decoder once per row: reading them through `decoder` retained and released it
    // around every column.
    private let statement: Unmanaged<Statement>
    private let handle: OpaquePointer
    private let base: Int

    init(decoder: StatementDecoder) {
        self.decoder = decoder
        self.statement = .passUnretained(decoder.statement)
        self.handle = decoder.handle
        self.base = decoder.base
    }

    @inline(__always)
    private func reader(_ index: Int) -> ColumnReader {
        ColumnReader(statement: statement, handle: handle, column: Int32(base + index))
    }

    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Bool.Type, at index: Int) throws -> Bool { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: String.Type, at index: Int) throws -> String { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Double.Type, at index: Int) throws -> Double { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Float.Type, at index: Int) throws -> Float { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Int.Type, at index: Int) throws -> Int { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Int8.Type, at index: Int) throws -> Int8 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Int16.Type, at index: Int) throws -> Int16 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Int32.Type, at index: Int) throws -> Int32 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: Int64.Type, at index: Int) throws -> Int64 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: UInt.Type, at index: Int) throws -> UInt { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: UInt8.Type, at index: Int) throws -> UInt8 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: UInt16.Type, at index: Int) throws -> UInt16 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: UInt32.Type, at index: Int) throws -> UInt32 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL.
    public func decode(_ type: UInt64.Type, at index: Int) throws -> UInt64 { try reader(index).decode(type) }
    /// The value at `index`, which must not be NULL (a BLOB; other storage converts as `Data` decodes).
    public func decode(_ type: Data.Type, at index: Int) throws -> Data { try reader(index).data() }
    /// The value at `index` of any other type (`Data`, `Date`, raw-value enums, JSON-stored values…).
    public func decode<T: Decodable>(_ type: T.Type, at index: Int) throws -> T { try reader(index).decode(type) }

    /// The value at `index`, or nil when it is NULL: an optional property.
    public func decodeIfPresent(_ type: Int64.Type, at index: Int) throws -> Int64? {
        let reader = reader(index)
        return reader.storageClass == SQLITE_NULL ? nil : try reader.int64()
    }
    /// The value at `index`, or nil when it is NULL: an optional property.
    public func decodeIfPresent(_ type: Int.Type, at index: Int) throws -> Int? {
        let reader = reader(index)
        return reader.storageClass == SQLITE_NULL ? nil : try reader.integer() as Int
    }
    /// The value at `index`, or nil when it is NULL: an optional property.
    public func decodeIfPresent(_ type: String.Type, at index: Int) throws -> String? {
        let reader = reader(index)
        return reader.storageClass == SQLITE_NULL ? nil : try reader.string()
    }
    /// The value at `index`, or nil when it is NULL: an optional property.
    public func decodeIfPresent(_ type: Double.Type, at index: Int) throws -> Double? {
        let reader = reader(index)
        return reader.storageClass == SQLITE_NULL ? nil : try reader.double()
    }
    /// The value at `index`, or nil when it is NULL: an optional property of any other type.
    public func decodeIfPresent<T: Decodable>(_ type: T.Type, at index: Int) throws -> T? {
        let reader = reader(index)
        guard reader.storageClass != SQLITE_NULL else { return nil }
        return try reader.decode(type)
    }
}
