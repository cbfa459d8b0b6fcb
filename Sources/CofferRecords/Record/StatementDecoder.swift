import CSQLCipher
import CofferEngine
import Foundation

/// Decodes records straight from the columns of the current row of a ``Statement`` — no intermediate
/// dictionary, no JSON — so decoding costs little more than reading the columns by hand.
///
/// Keys map to column indexes through a table built once per query. Synthesized `init(from:)` asks for
/// keys in declaration order, which is the order Coffer selects columns in, so the lookup first tries the
/// next column in line (a cheap string comparison) and falls back to the table.
@usableFromInline
package final class StatementDecoder {
    /// Not retained: the statement keeps the decoder ``forRecord`` made for it, and every other
    /// decoder lives inside a fetch that holds its statement.
    unowned(unsafe) let statement: Statement
    /// The statement whose current row the readers read: `statement`'s own, or, while a fetch reads
    /// ahead, the in-memory statement that holds a copied row (``prefetchedRecords(_:from:)``).
    @exclusivity(unchecked) var handle: OpaquePointer
    let names: [String]
    let indexByName: [String: Int]
    /// The first column of the record in the row (non-zero for the right side of a join).
    let base: Int
    /// The record type ``forRecord`` built this decoder for, or nil.
    let recordType: ObjectIdentifier?
    /// The column expected next. Only this decoder touches it, on one thread, per row: the dynamic
    /// exclusivity check would cost more than the lookup it serves.
    @exclusivity(unchecked) var next = 0

    init(statement: Statement, names: [String], base: Int = 0, recordType: ObjectIdentifier? = nil) {
        self.statement = statement
        self.handle = statement.handle
        self.names = names
        var index: [String: Int] = [:]
        for (offset, name) in names.enumerated() { index[name] = offset }
        self.indexByName = index
        self.base = base
        self.recordType = recordType
    }

    /// The decoder for `Record` on `statement`, kept by the statement: a cached statement fetching one
    /// record type builds its column table once, not once per fetch.
    @usableFromInline
    package static func forRecord<Record: TableRecord>(_ type: Record.Type, on statement: Statement) -> StatementDecoder {
        // Only this function fills the slot, always with a StatementDecoder: the unchecked downcast saves
        // the dynamic cast's runtime call on every fetch of a cached statement.
        if let slot = statement.recordDecoder {
            let cached = unsafeDowncast(slot, to: StatementDecoder.self)
            if cached.recordType == ObjectIdentifier(type) { return cached }
        }
        let decoder = StatementDecoder(
            statement: statement, names: Record.columnDefinitions.map(\.name), recordType: ObjectIdentifier(type))
        statement.recordDecoder = decoder
        return decoder
    }

    /// Every remaining row of `statement` as a `Record`. A record with compressed columns is read ahead on
    /// a second thread past its first rows (``prefetchedRecords(_:from:)``).
    static func fetchAll<Record: TableRecord>(_ type: Record.Type, from statement: Statement) throws -> [Record] {
        if Record.hasCompressedColumns && RowPrefetcher.isWorthwhile {
            return try prefetchedRecords(type, from: statement)
        }
        return try records(type, from: statement) { _ in }
    }

    /// Every remaining row of `statement` as a `Record`, calling `body` with each record's index once it is
    /// decoded (while the statement is on its row). The records go into a ``RecordBuffer``, which
    /// becomes the array once (no `Array.append` per row in this unspecialized code).
    static func records<Record: TableRecord>(
        _ type: Record.Type, from statement: Statement, _ body: (Int) throws -> Void
    ) throws -> [Record] {
        let records = RecordBuffer<Record>()
        try append(type, from: statement, to: records, body)
        return records.takeArray()
    }

    /// Appends every remaining row of `statement` as a `Record` to `records`, calling `body` with each
    /// record's index there once it is decoded (while the statement is on its row).
    static func append<Record: TableRecord>(
        _ type: Record.Type, from statement: Statement, to records: RecordBuffer<Record>, _ body: (Int) throws -> Void
    ) throws {
        let decoder = forRecord(type, on: statement)
        while try statement.step() {
            records.append(try decoder.record(type))
            try body(records.count - 1)
        }
    }

    /// The next row of `statement` as a `Record`, or nil when there is none.
    static func fetchOne<Record: TableRecord>(_ type: Record.Type, from statement: Statement) throws -> Record? {
        guard try statement.step() else { return nil }
        return try forRecord(type, on: statement).record(type)
    }

    /// Reads one table record from the current row through its ``TableRecord/init(statementRow:)``.
    package func record<Record: TableRecord>(_ type: Record.Type) throws -> Record {
        try Record(statementRow: StatementRow(decoder: self))
    }

    /// Decodes one record from the current row through its Codable `init(from:)`.
    func decode<Record: Decodable>(_ type: Record.Type) throws -> Record {
        next = 0
        return try Record(from: KeyedStatementDecoder(context: self))
    }

    /// The column of `key`, or nil when the query did not select it.
    @inline(__always)
    func column(for key: some CodingKey) -> Int32? {
        let name = key.stringValue
        if next < names.count, names[next] == name {
            next += 1
            return Int32(base + next - 1)
        }
        guard let index = indexByName[name] else { return nil }
        next = index + 1
        return Int32(base + index)
    }

    /// True when every column of the record is NULL (the missing side of a left join).
    var isAllNull: Bool {
        (0..<names.count).allSatisfy { sqlite3_column_type(handle, Int32(base + $0)) == SQLITE_NULL }
    }
}

struct KeyedStatementDecoder: Decoder {
    let context: StatementDecoder
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(StatementKeyedContainer<Key>(context: context))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw CofferError(code: .conversionFailed, message: "a record must decode a keyed container")
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw CofferError(code: .conversionFailed, message: "a record must decode a keyed container")
    }
}

struct StatementKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let context: StatementDecoder
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { context.names.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool { context.indexByName[key.stringValue] != nil }

    private func column(_ key: Key) throws -> ColumnReader {
        guard let column = context.column(for: key) else {
            throw DecodingError.keyNotFound(key, .init(codingPath: [], debugDescription: "column not selected"))
        }
        return ColumnReader(
            statement: .passUnretained(context.statement), value: sqlite3_column_value(context.handle, column), column: column)
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let column = context.column(for: key) else { return true }
        // A non-NULL column is decoded next with the same key: step back so that lookup finds it again.
        if sqlite3_column_type(context.handle, column) == SQLITE_NULL { return true }
        context.next -= 1
        return false
    }

    /// Optional properties: one lookup, then NULL or the value (the default would look the key up thrice).
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? { try optional(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let column = context.column(for: key), sqlite3_column_type(context.handle, column) != SQLITE_NULL else {
            return nil
        }
        return try ColumnReader(
            statement: .passUnretained(context.statement), value: sqlite3_column_value(context.handle, column), column: column
        ).decode(type)
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try column(key).decode(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try column(key).decode(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try column(key).decode(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try column(key).decode(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try column(key).decode(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try column(key).decode(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try column(key).decode(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try column(key).decode(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try column(key).decode(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try column(key).decode(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try column(key).decode(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try column(key).decode(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try column(key).decode(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try column(key).decode(type) }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try column(key).decode(type) }

    func nestedContainer<NestedKey: CodingKey>(
        keyedBy type: NestedKey.Type, forKey key: Key
    ) throws -> KeyedDecodingContainer<NestedKey> {
        throw CofferError(code: .conversionFailed, message: "nested containers are not supported in a record")
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw CofferError(code: .conversionFailed, message: "nested containers are not supported in a record")
    }

    func superDecoder() throws -> any Decoder { KeyedStatementDecoder(context: context) }
    func superDecoder(forKey key: Key) throws -> any Decoder { KeyedStatementDecoder(context: context) }
}
