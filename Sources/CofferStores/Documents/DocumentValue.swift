import CofferEngine
import CofferRecords
import Foundation

/// A schemaless value: what a ``DocumentStore`` document, and each of its attributes, holds.
///
/// ```swift
/// let person: Document = [
///     "name": "Tom", "last": "Jones", "age": 42, "born": .date(born),
///     "address": ["city": "Boston"], "tags": ["admin", "swift"],
/// ]
/// ```
///
/// Its `Codable` form is plain JSON (a date and data encode the way the encoder encodes `Date` and
/// `Data`), so a `DocumentValue` can sit inside any `Codable` type; the store itself keeps dates and data
/// as their own types.
public indirect enum DocumentValue: Hashable, Sendable {
    /// A string.
    case string(String)
    /// An integer.
    case int(Int64)
    /// A floating-point number (compared with integers by value).
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// A date.
    case date(Date)
    /// Bytes.
    case data(Data)
    /// An explicit null (unlike a missing attribute, it can be searched with ``DocumentPredicate/isNull(_:)``).
    case null
    /// A nested object.
    case object([String: DocumentValue])
    /// An array; each element is searchable at the path's `[]` component.
    case array([DocumentValue])

    /// The value at `path` (an object key, or every element of an array for `[]`), or nil when missing.
    /// For a path through an array, the first element that has it.
    public subscript(path: DocumentPath) -> DocumentValue? {
        var current: [DocumentValue] = [self]
        for component in path.components {
            var next: [DocumentValue] = []
            for value in current {
                switch (component, value) {
                case (.key(let key), .object(let object)): if let found = object[key] { next.append(found) }
                case (.elements, .array(let elements)): next += elements
                default: break
                }
            }
            current = next
        }
        return current.first
    }

    /// The string, or nil for another kind of value.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as a `Double` (an ``int(_:)`` or a ``double(_:)``), or nil for another kind of value.
    public var doubleValue: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    /// The integer (a ``double(_:)`` only when exact), or nil for another kind of value.
    public var intValue: Int64? {
        switch self {
        case .int(let value): return value
        case .double(let value): return Int64(exactly: value)
        default: return nil
        }
    }

    /// The object's members, or nil for another kind of value.
    public var objectValue: [String: DocumentValue]? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// The array's elements, or nil for another kind of value.
    public var arrayValue: [DocumentValue]? {
        if case .array(let value) = self { return value }
        return nil
    }
}

/// A dynamic document: an object whose members may be of any ``DocumentValue`` kind.
public typealias Document = [String: DocumentValue]

extension DocumentValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral
{
    /// Creates a value from a literal.
    public init(stringLiteral value: String) { self = .string(value) }
    /// Creates a value from a literal.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// Creates a value from a literal.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// Creates a value from a literal.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// Creates a value from a literal.
    public init(nilLiteral: ()) { self = .null }
    /// Creates a value from a literal.
    public init(arrayLiteral elements: DocumentValue...) { self = .array(elements) }
    /// Creates a value from a literal.
    public init(dictionaryLiteral elements: (String, DocumentValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}

extension DocumentValue: Codable {
    /// Decodes plain JSON-like data: null, a Boolean, an integer, a number, a string, an object or an array.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([String: DocumentValue].self) {
            self = .object(value)
        } else {
            self = .array(try container.decode([DocumentValue].self))
        }
    }

    /// Encodes the value as plain data; a date and bytes as the encoder encodes `Date` and `Data`.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .date(let value): try container.encode(value)
        case .data(let value): try container.encode(value)
        case .null: try container.encodeNil()
        case .object(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        }
    }
}
