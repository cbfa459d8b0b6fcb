/// The values bound to a statement's `?` parameters, in order.
///
/// ```swift
/// try db.execute(sql: "INSERT INTO player(name, score) VALUES (?, ?)", arguments: ["Arthur", 1000])
/// ```
public struct StatementArguments: Sendable, ExpressibleByArrayLiteral, Hashable {
    /// The values, in parameter order.
    public var values: [DatabaseValue]

    /// Creates arguments from database values.
    public init(_ values: [DatabaseValue] = []) { self.values = values }

    /// Creates arguments from convertible values; `nil` binds NULL.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        // A loop over indices rather than `map`: each element is read in place, not copied out twice.
        var converted: [DatabaseValue] = []
        converted.reserveCapacity(values.count)
        for index in values.indices {
            converted.append(values[index]?.databaseValue ?? .null)
        }
        self.values = converted
    }

    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }

    /// Appends the values of other arguments.
    public static func + (lhs: StatementArguments, rhs: StatementArguments) -> StatementArguments {
        StatementArguments(lhs.values + rhs.values)
    }

    /// Appends the values of other arguments.
    public static func += (lhs: inout StatementArguments, rhs: StatementArguments) {
        lhs.values += rhs.values
    }
}
