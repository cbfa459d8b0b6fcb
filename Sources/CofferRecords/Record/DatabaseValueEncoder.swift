import CofferEngine
import Foundation

/// Encodes one Swift value into the ``DatabaseValue`` Coffer stores for it.
///
/// Types that are ``DatabaseValueConvertible`` (numbers, Bool, String, Data, Date, UUID, URL) use their
/// own storage. Others go through `Encodable`: raw-value enums become their raw value; anything that asks
/// for a keyed or unkeyed container (nested structs, arrays, dictionaries) is stored as JSON text with
/// sorted keys.
enum DatabaseValueEncoder {
    static func encode<Value: Encodable>(_ value: Value) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible { return convertible.databaseValue }
        let box = ValueBox()
        try value.encode(to: SingleValueDatabaseEncoder(box: box))
        if let error = box.error { throw error }
        if box.needsJSON {
            // Sorted keys: equal values always store equal text, so they can be compared in SQL.
            let encoder = JSONEncoder()
            encoder.outputFormatting = .sortedKeys
            let json = try encoder.encode(value)
            return .text(String(decoding: json, as: UTF8.self))
        }
        return box.value
    }
}

/// Where a single-value encoding lands.
final class ValueBox {
    var value: DatabaseValue = .null
    /// Set when the value asked for a container: it is then stored as JSON.
    var needsJSON = false
    var error: CofferError?
}

/// An `Encoder` for one column value.
struct SingleValueDatabaseEncoder: Encoder, SingleValueEncodingContainer {
    let box: ValueBox
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        box.needsJSON = true
        return KeyedEncodingContainer(DiscardingEncodingContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        box.needsJSON = true
        return DiscardingEncodingContainer<AnyCodingKey>()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    mutating func encodeNil() throws { box.value = .null }
    mutating func encode(_ value: Bool) throws { box.value = value.databaseValue }
    mutating func encode(_ value: String) throws { box.value = .text(value) }
    mutating func encode(_ value: Double) throws { box.value = .real(value) }
    mutating func encode(_ value: Float) throws { box.value = .real(Double(value)) }
    mutating func encode(_ value: Int) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int8) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int16) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int32) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: Int64) throws { box.value = .integer(value) }
    mutating func encode(_ value: UInt) throws { box.value = try Self.integer(value) }
    mutating func encode(_ value: UInt8) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: UInt16) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: UInt32) throws { box.value = .integer(Int64(value)) }
    mutating func encode(_ value: UInt64) throws { box.value = try Self.integer(value) }
    mutating func encode<T: Encodable>(_ value: T) throws { box.value = try DatabaseValueEncoder.encode(value) }

    static func integer(_ value: some BinaryInteger) throws -> DatabaseValue {
        guard let int = Int64(exactly: value) else {
            throw CofferError(code: .conversionFailed, message: "\(value) does not fit a 64-bit SQLite integer")
        }
        return .integer(int)
    }
}

/// A container that ignores what it is given: the value is re-encoded as JSON afterwards.
struct DiscardingEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol, UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil(forKey key: Key) throws {}
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingEncodingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { DiscardingEncoder() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { DiscardingEncoder() }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(DiscardingEncodingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
}

/// An encoder whose output is dropped.
struct DiscardingEncoder: Encoder {
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(DiscardingEncodingContainer<Key>())
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer { DiscardingEncodingContainer<AnyCodingKey>() }
    func singleValueContainer() -> any SingleValueEncodingContainer { SingleValueDatabaseEncoder(box: ValueBox()) }
}

/// A coding key made from a string or an index.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int?
    init(stringValue: String) {
        self.stringValue = stringValue
        self.intValue = nil
    }
    init(intValue: Int) {
        self.stringValue = String(intValue)
        self.intValue = intValue
    }
}

/// The conversions the record writer that `@Table` generates (``TableRecord/columnValues()``) calls, one
/// per property: each produces exactly the value the Codable path stores for it.
///
/// A ``DatabaseValueConvertible`` type uses its own storage, chosen at compile time; any other
/// `Encodable` type goes through the same encoder as the Codable path (raw-value enums as their raw
/// value, nested types as JSON text). A nil optional is NULL. All of them are `throws`, so that the generated
/// code can call any of them the same way; only the `Encodable` ones can fail.
extension DatabaseValue {
    /// The stored value of a non-optional property whose type has its own storage.
    @inlinable
    public static func columnValue<Value: DatabaseValueConvertible & Encodable>(_ value: Value) throws -> DatabaseValue {
        value.databaseValue
    }

    /// The stored value of a non-optional property of any other `Encodable` type.
    public static func columnValue<Value: Encodable>(_ value: Value) throws -> DatabaseValue {
        try DatabaseValueEncoder.encode(value)
    }

    /// The stored value of an optional property whose type has its own storage (NULL for nil).
    @inlinable
    public static func optionalColumnValue<Value: DatabaseValueConvertible & Encodable>(_ value: Value?) throws
        -> DatabaseValue
    {
        value?.databaseValue ?? .null
    }

    /// The stored value of an optional property of any other `Encodable` type (NULL for nil).
    public static func optionalColumnValue<Value: Encodable>(_ value: Value?) throws -> DatabaseValue {
        guard let value else { return .null }
        return try DatabaseValueEncoder.encode(value)
    }
}
