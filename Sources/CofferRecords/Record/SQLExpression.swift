import CofferEngine

/// Anything that renders as an SQL expression over the columns of `Root`.
///
/// `Root` is the table (or join) whose columns the expression may use. Every builder method constrains
/// it, so an expression over another table's columns does not type-check where it does not belong.
public protocol SQLExpressionConvertible<Root>: Sendable {
    /// The table, or join of tables, whose columns the expression reads.
    associatedtype Root
    /// The expression as SQL parts.
    var sqlFragment: SQLFragment { get }
}

/// An expression whose SQL result is a `Value`: a column, a comparison, an aggregate.
public protocol TypedExpression: SQLExpressionConvertible {
    /// The Swift type the expression's result decodes to.
    associatedtype Value
}

/// An expression built from columns, values and operators, producing a `Value`.
///
/// You do not create these directly: columns and operators do.
///
/// ```swift
/// let recent: SQLExpression<Message, Bool> = Message.columns.createdAt > cutoff
/// ```
public struct SQLExpression<Root, Value>: TypedExpression {
    /// The expression as SQL parts.
    public let sqlFragment: SQLFragment

    package init(_ fragment: SQLFragment) { self.sqlFragment = fragment }
}

/// A column of the table `Root` whose values are `Value`: what `@Table` generates for each stored
/// property, so that `Message.columns.conversationID` is a `TableColumn<Message, Int64>`.
///
/// ```swift
/// try Message.filter { $0.conversationID == 42 }.order { $0.createdAt.desc }.fetchAll(db)
/// ```
public struct TableColumn<Root: TableRecord, Value>: TypedExpression {
    /// The column name.
    public let name: String
    /// True for a column declared `@Column(compressed:)`: expressions read its plain values.
    public let isCompressed: Bool

    /// Creates the column named `name` (the macro does this; you should not need to).
    public init(name: String) {
        self.name = name
        self.isCompressed = false
    }

    /// Creates the column named `name`, compressed or not (the macro does this for compressed columns).
    public init(name: String, compressed: Bool) {
        self.name = name
        self.isCompressed = compressed
    }

    /// The column, qualified with its table inside joins; a compressed column reads through
    /// `coffer_decompress`, so that filters and orderings compare plain values.
    public var sqlFragment: SQLFragment {
        let column = SQLFragment([.column(table: Root.tableName, name: name)])
        return isCompressed ? .decompressed(column) : column
    }
}

extension SQLFragment {
    /// A value encoded the way Coffer stores it; an encoding failure surfaces when the query runs.
    static func encoding<Value: Encodable>(_ value: Value) -> SQLFragment {
        do {
            return SQLFragment(value: try DatabaseValueEncoder.encode(value))
        } catch let error as CofferError {
            return SQLFragment([.invalid(error)])
        } catch {
            return SQLFragment([.invalid(CofferError(code: .conversionFailed, message: "\(error)"))])
        }
    }

    /// True when the fragment is exactly one NULL value.
    var isNullValue: Bool {
        if parts.count == 1, case .value(.null) = parts[0] { return true }
        return false
    }
}
