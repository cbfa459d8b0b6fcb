import CofferEngine

/// Encodes a record into the values of its columns, in `columnDefinitions` order.
///
/// Each property goes through ``DatabaseValueEncoder``; a property the table does not declare is an
/// error (a `CodingKeys` that renames a property away from its column).
struct RecordEncoder<Record: TableRecord> {
    /// Column positions by name, computed once per batch.
    let indexByName: [String: Int]

    init() {
        var index: [String: Int] = [:]
        for (offset, column) in Record.columnDefinitions.enumerated() { index[column.name] = offset }
        indexByName = index
    }

    func values(of record: Record) throws -> [DatabaseValue] {
        let storage = RecordStorage(count: indexByName.count)
        try record.encode(to: KeyedRecordEncoder(storage: storage, indexByName: indexByName))
        if let error = storage.error { throw error }
        return storage.values
    }
}

final class RecordStorage {
    var values: [DatabaseValue]
    var error: CofferError?
    init(count: Int) { values = Array(repeating: .null, count: count) }
}

struct KeyedRecordEncoder: Encoder {
    let storage: RecordStorage
    let indexByName: [String: Int]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordEncodingContainer<Key>(storage: storage, indexByName: indexByName))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        storage.error = CofferError(code: .conversionFailed, message: "a record must encode a keyed container")
        return DiscardingEncodingContainer<AnyCodingKey>()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        storage.error = CofferError(code: .conversionFailed, message: "a record must encode a keyed container")
        return SingleValueDatabaseEncoder(box: ValueBox())
    }
}

struct RecordEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: RecordStorage
    let indexByName: [String: Int]
    var codingPath: [any CodingKey] { [] }

    private func index(_ key: Key) throws -> Int {
        guard let index = indexByName[key.stringValue] else {
            throw CofferError(code: .conversionFailed, message: "no column for coding key '\(key.stringValue)'")
        }
        return index
    }

    mutating func encodeNil(forKey key: Key) throws { storage.values[try index(key)] = .null }
    mutating func encode(_ value: Bool, forKey key: Key) throws { storage.values[try index(key)] = value.databaseValue }
    mutating func encode(_ value: String, forKey key: Key) throws { storage.values[try index(key)] = .text(value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { storage.values[try index(key)] = .real(value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { storage.values[try index(key)] = .integer(value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { storage.values[try index(key)] = .integer(Int64(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        storage.values[try index(key)] = try DatabaseValueEncoder.encode(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        storage.error = unsupported
        return KeyedEncodingContainer(DiscardingEncodingContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        storage.error = unsupported
        return DiscardingEncodingContainer<AnyCodingKey>()
    }

    mutating func superEncoder() -> any Encoder {
        storage.error = unsupported
        return DiscardingEncoder()
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        storage.error = unsupported
        return DiscardingEncoder()
    }

    private var unsupported: CofferError {
        CofferError(
            code: .conversionFailed,
            message: "nested containers are not supported in a record: make the property its own Codable type")
    }
}
