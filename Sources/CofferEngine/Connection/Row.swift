/// The column names of a result set, shared by all its rows, with case-insensitive lookup.
final class RowLayout: Sendable {
    let names: [String]
    private let indexByName: [String: Int]

    init(names: [String]) {
        self.names = names
        var index: [String: Int] = [:]
        // The leftmost column wins when two share a name, as in SQLite's own lookup.
        for (offset, name) in names.enumerated().reversed() { index[name.lowercased()] = offset }
        self.indexByName = index
    }

    func index(of name: String) -> Int? { indexByName[name.lowercased()] }
}

/// One row of a result, copied out of the statement.
///
/// ```swift
/// if let row = try db.fetchOne(sql: "SELECT id, name FROM player WHERE id = ?", arguments: [1]) {
///     let name: String? = row["name"]
///     let id = try row.decode(Int64.self, at: 0)
/// }
/// ```
public struct Row: Sendable, CustomStringConvertible {
    let layout: RowLayout
    /// The values, in column order.
    public let values: [DatabaseValue]

    init(layout: RowLayout, values: [DatabaseValue]) {
        self.layout = layout
        self.values = values
    }

    /// The column names, in order.
    public var columnNames: [String] { layout.names }

    /// The number of columns.
    public var count: Int { values.count }

    /// The value at a 0-based column index.
    public subscript(index: Int) -> DatabaseValue { values[index] }

    /// The value of a named column converted to `Value`, or nil when the column is missing, NULL or
    /// not convertible.
    public subscript<Value: DatabaseValueConvertible>(_ name: String) -> Value? {
        guard let index = layout.index(of: name) else { return nil }
        return Value.fromDatabaseValue(values[index])
    }

    /// The raw value of a named column, or nil when there is no such column.
    public func value(named name: String) -> DatabaseValue? {
        layout.index(of: name).map { values[$0] }
    }

    /// Decodes the column at `index`, throwing ``CofferError/conversionFailed`` when it cannot.
    public func decode<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self, at index: Int) throws -> Value {
        guard values.indices.contains(index) else {
            throw CofferError(code: .range, message: "no column at index \(index)")
        }
        guard let value = Value.fromDatabaseValue(values[index]) else {
            throw CofferError(
                code: .conversionFailed, message: "cannot convert \(values[index].typeName) in column \(index) to \(Value.self)")
        }
        return value
    }

    /// Decodes a named column, throwing when it is missing or not convertible.
    public func decode<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self, named name: String) throws -> Value {
        guard let index = layout.index(of: name) else {
            throw CofferError(code: .range, message: "no column named \(name)")
        }
        return try decode(type, at: index)
    }

    public var description: String {
        "[" + zip(layout.names, values).map { "\($0): \($1)" }.joined(separator: ", ") + "]"
    }
}
