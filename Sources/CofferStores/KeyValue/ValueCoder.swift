import CofferEngine
import CofferRecords
import Foundation

/// Turns values into bytes and back for a ``KeyValueStore``.
///
/// Strings, numbers, `Bool`, `Data`, `Date` and `UUID` never go through the coder: they are stored in
/// their natural SQLite storage class (TEXT, INTEGER, REAL, BLOB), so they stay readable from the
/// `sqlite3` shell and cost nothing to encode. Every other `Codable` value is encoded by the store's
/// coder into a BLOB.
///
/// Conform your own type to plug in another serializer:
///
/// ```swift
/// struct ProtobufCoder: KeyValueCoder {
///     func encode<Value: Encodable>(_ value: Value) throws -> Data { … }
///     func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value { … }
/// }
/// let store = try KeyValueStore(database: db, name: "feed", configuration: .init(coder: ProtobufCoder()))
/// ```
public protocol KeyValueCoder: Sendable {
    /// Encodes `value` into bytes.
    func encode<Value: Encodable>(_ value: Value) throws -> Data
    /// Decodes a value of `type` from bytes produced by ``encode(_:)``.
    func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value
}

/// The default coder: JSON, as the server sent it.
public struct JSONKeyValueCoder: KeyValueCoder {
    /// Creates a JSON coder.
    public init() {}

    /// Encodes `value` as JSON.
    public func encode<Value: Encodable>(_ value: Value) throws -> Data {
        try JSONEncoder().encode(value)
    }

    /// Decodes JSON.
    public func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try JSONDecoder().decode(type, from: data)
    }
}

/// A binary property-list coder: more compact than JSON for numeric data, and keeps `Date` exact.
public struct PropertyListKeyValueCoder: KeyValueCoder {
    /// Creates a binary property-list coder.
    public init() {}

    /// Encodes `value` as a binary property list.
    public func encode<Value: Encodable>(_ value: Value) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }

    /// Decodes a property list.
    public func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        try PropertyListDecoder().decode(type, from: data)
    }
}

extension KeyValueCoder where Self == JSONKeyValueCoder {
    /// JSON (the default).
    public static var json: JSONKeyValueCoder { JSONKeyValueCoder() }
}

extension KeyValueCoder where Self == PropertyListKeyValueCoder {
    /// Binary property lists.
    public static var propertyList: PropertyListKeyValueCoder { PropertyListKeyValueCoder() }
}

/// Where an item lives, for error messages.
struct ItemLocation: Sendable {
    let store: String
    let bucket: String
    let key: String

    func error(_ reason: KeyValueError.Reason, _ detail: String) -> KeyValueError {
        KeyValueError(reason: reason, store: store, bucket: bucket, key: key, detail: detail)
    }
}

/// The mapping between Swift values and the `value` / `metadata` columns.
enum StoredValueCoding {
    /// The column value for `value`: its own storage class when it has one, else the coder's bytes.
    static func encode<Value: Encodable>(
        _ value: Value, coder: any KeyValueCoder, at location: ItemLocation
    ) throws -> DatabaseValue {
        if let convertible = value as? any DatabaseValueConvertible {
            return convertible.databaseValue
        }
        do {
            return .blob(try coder.encode(value))
        } catch {
            throw location.error(.encodingFailed, "\(Value.self): \(error)")
        }
    }

    /// Decodes a column value as `Value`.
    static func decode<Value: Decodable>(
        _ type: Value.Type, from stored: DatabaseValue, coder: any KeyValueCoder, at location: ItemLocation
    ) throws -> Value {
        if let convertible = Value.self as? any DatabaseValueConvertible.Type {
            guard let value = convertible.fromDatabaseValue(stored) as? Value else {
                throw location.error(.typeMismatch, "cannot read \(stored.typeName) as \(Value.self)")
            }
            return value
        }
        let bytes: Data
        switch stored {
        case .blob(let data): bytes = data
        case .text(let text): bytes = Data(text.utf8)
        default: throw location.error(.typeMismatch, "cannot decode \(Value.self) from \(stored.typeName)")
        }
        do {
            return try coder.decode(type, from: bytes)
        } catch {
            throw location.error(.decodingFailed, "\(Value.self): \(error)")
        }
    }

    /// The number of bytes a column value occupies, for byte caps and cache costs.
    static func byteCount(of value: DatabaseValue) -> Int {
        switch value {
        case .null: return 0
        case .integer, .real: return 8
        case .text(let text): return text.utf8.count
        case .blob(let data): return data.count
        }
    }
}
