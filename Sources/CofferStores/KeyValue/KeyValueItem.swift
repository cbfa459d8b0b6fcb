import CofferEngine
import CofferRecords
import Foundation

/// One stored item: its value, its metadata and its timestamps.
///
/// ```swift
/// if let item = try store.item(User.self, for: "42") {
///     let etag = try item.metadata(as: String.self)
///     print(item.value.name, item.updatedAt, etag ?? "-")
/// }
/// ```
public struct KeyValueItem<Value: Sendable>: Sendable {
    /// The bucket the item is in.
    public let bucket: String
    /// The item's key.
    public let key: String
    /// The decoded value.
    public let value: Value
    /// When the item was first written.
    public let createdAt: Date
    /// When the item was last written.
    public let updatedAt: Date
    /// When the item expires, if ever.
    public let expiresAt: Date?
    /// The stored metadata, undecoded; nil when the item was written without metadata.
    public let storedMetadata: DatabaseValue
    let coder: any KeyValueCoder
    let location: ItemLocation

    /// True when the item was written with metadata.
    public var hasMetadata: Bool { !storedMetadata.isNull }

    /// The metadata decoded as `type`, or nil when the item has none.
    ///
    /// - Throws: ``KeyValueError`` when the metadata does not decode as `type`.
    public func metadata<Metadata: Decodable>(as type: Metadata.Type) throws -> Metadata? {
        guard hasMetadata else { return nil }
        return try StoredValueCoding.decode(type, from: storedMetadata, coder: coder, at: location)
    }
}

/// An item as read from the table, before its value is decoded.
struct StoredItem: Sendable {
    let id: Int64
    let bucket: String
    let key: String
    let value: DatabaseValue
    let metadata: DatabaseValue
    let createdAt: Date
    let updatedAt: Date
    let expiresAt: Date?
    let size: Int

    /// The columns, in the order ``init(statement:)`` reads them, for `SELECT` lists.
    static func columns(prefix: String = "", decompressing: Bool = false) -> String {
        ["id", "bucket", "key", "value", "metadata", "created_at", "updated_at", "expires_at", "size"]
            .map { $0 == "value" ? ColumnCompression.readSQL(prefix + $0, decompressing: decompressing) : prefix + $0 }
            .joined(separator: ", ")
    }

    init(statement: Statement) {
        id = statement.int64(at: 0)
        bucket = statement.string(at: 1)
        key = statement.string(at: 2)
        value = statement.value(at: 3)
        metadata = statement.value(at: 4)
        createdAt = Date(timeIntervalSince1970: statement.double(at: 5))
        updatedAt = Date(timeIntervalSince1970: statement.double(at: 6))
        expiresAt = statement.isNull(at: 7) ? nil : Date(timeIntervalSince1970: statement.double(at: 7))
        size = Int(statement.int64(at: 8))
    }
}

/// An item encoded and ready to save: everything the write transaction needs, computed beforehand.
struct PendingItem: Sendable {
    let bucket: String
    let key: String
    let value: DatabaseValue
    let metadata: DatabaseValue
    let expiry: KeyValueExpiry
    let indexValues: [(field: String, value: DatabaseValue)]

    var size: Int { StoredValueCoding.byteCount(of: value) + StoredValueCoding.byteCount(of: metadata) }
}
