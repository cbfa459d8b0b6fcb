import Foundation

/// A value as SQLite stores it: NULL, a 64-bit integer, a double, UTF-8 text or a blob.
public enum DatabaseValue: Hashable, Sendable, CustomStringConvertible {
    /// SQL NULL.
    case null
    /// An INTEGER value.
    case integer(Int64)
    /// A REAL value.
    case real(Double)
    /// A TEXT value.
    case text(String)
    /// A BLOB value.
    case blob(Data)

    /// True for ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .null: return "NULL"
        case .integer(let value): return String(value)
        case .real(let value): return String(value)
        case .text(let value): return value.debugDescription
        case .blob(let value): return "<\(value.count) bytes>"
        }
    }
}

/// A Swift type that can be bound to a statement and read back from a column.
///
/// Coffer conforms `Int`, the sized integers, `Double`, `Float`, `Bool`, `String`, `Data`, `Date`,
/// `UUID`, `URL` and `Optional` of them. Storage choices: `Bool` as 0/1, `Date` as REAL seconds since
/// 1970 (sortable, exact to the microsecond), `UUID` as a 16-byte BLOB (TEXT is accepted when reading).
public protocol DatabaseValueConvertible: Sendable {
    /// The value to bind.
    var databaseValue: DatabaseValue { get }
    /// Converts a stored value back, or returns nil when it cannot be represented.
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?
    /// Binds the value to `statement`'s parameter `index`, counted from 1, as ``databaseValue`` would bind.
    ///
    /// The default binds ``databaseValue``. Coffer's integers, `Double` and `String` bind themselves
    /// without building a ``DatabaseValue`` first (prepared queries bind their arguments this way); a
    /// type of yours needs to implement it only to save that step.
    func bind(to statement: Statement, at index: Int) throws
}

extension DatabaseValueConvertible {
    /// Binds ``databaseValue``.
    public func bind(to statement: Statement, at index: Int) throws {
        try statement.bind(databaseValue, toParameter: index)
    }
}

extension DatabaseValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }
}

extension Int64: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self) }
    /// Binds the INTEGER.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(integer: self, toParameter: index) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Int64? {
        switch value {
        case .integer(let int): return int
        case .real(let double): return Int64(exactly: double)
        default: return nil
        }
    }
}

/// Integers are stored as INTEGER and read back only when the stored value fits exactly.
public protocol DatabaseIntegerConvertible: FixedWidthInteger, DatabaseValueConvertible {}

extension DatabaseIntegerConvertible {
    public var databaseValue: DatabaseValue { .integer(Int64(truncatingIfNeeded: self)) }
    /// Binds the INTEGER.
    public func bind(to statement: Statement, at index: Int) throws {
        try statement.bind(integer: Int64(truncatingIfNeeded: self), toParameter: index)
    }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        Int64.fromDatabaseValue(value).flatMap { Self(exactly: $0) }
    }
}

extension Int: DatabaseIntegerConvertible {}
extension Int32: DatabaseIntegerConvertible {}
extension Int16: DatabaseIntegerConvertible {}
extension Int8: DatabaseIntegerConvertible {}
extension UInt32: DatabaseIntegerConvertible {}
extension UInt16: DatabaseIntegerConvertible {}
extension UInt8: DatabaseIntegerConvertible {}

extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(self) }
    /// Binds the REAL.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(real: self, toParameter: index) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .real(let double): return double
        case .integer(let int): return Double(int)
        default: return nil
        }
    }
}

extension Float: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(Double(self)) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        Double.fromDatabaseValue(value).map { Float($0) }
    }
}

extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        switch value {
        case .integer(let int): return int != 0
        case .real(let double): return double != 0
        default: return nil
        }
    }
}

extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }
    /// Binds the TEXT.
    public func bind(to statement: Statement, at index: Int) throws { try statement.bind(text: self, toParameter: index) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        switch value {
        case .text(let text): return text
        case .integer(let int): return String(int)
        case .real(let double): return String(double)
        default: return nil
        }
    }
}

extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .blob(self) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let data): return data
        case .text(let text): return Data(text.utf8)
        default: return nil
        }
    }
}

extension Date: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(timeIntervalSince1970) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        Double.fromDatabaseValue(value).map { Date(timeIntervalSince1970: $0) }
    }
}

extension UUID: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue {
        withUnsafeBytes(of: uuid) { .blob(Data($0)) }
    }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case .blob(let data) where data.count == 16:
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyBytes(from: data) }
            return UUID(uuid: uuid)
        case .text(let text):
            return UUID(uuidString: text)
        default:
            return nil
        }
    }
}

extension URL: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(absoluteString) }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> URL? {
        String.fromDatabaseValue(value).flatMap { URL(string: $0) }
    }
}

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self?.databaseValue ?? .null }
    /// Binds the wrapped value as it binds itself, or NULL.
    public func bind(to statement: Statement, at index: Int) throws {
        if let self {
            try self.bind(to: statement, at: index)
        } else {
            try statement.bind(.null, toParameter: index)
        }
    }
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if value.isNull { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }
}
