// Parameters: the values a prepared query takes each time it runs.
//
// A query with `.parameter` in place of a value renders to SQL once, when it is prepared; each execution
// binds new arguments to those placeholders. The comparisons accept a parameter of the column's own
// Swift type only, so `$0.id == .parameter` on an `Int64` column is a `QueryParameter<Int64>`.

import CofferEngine

/// A placeholder for a value supplied each time a ``PreparedQuery`` runs.
///
/// ```swift
/// let byID = try Person.filter { $0.id == .parameter }.prepared()
/// let person = try byID.fetchOne(db, 42)
/// ```
///
/// Parameters take arguments in the order they appear in the query's SQL (``PreparedQuery/sql`` shows
/// it). A query with a parameter cannot run without preparing it: `fetchAll` on it throws
/// ``CofferError`` with code `apiMisuse`.
public struct QueryParameter<Value>: Sendable {
    /// A placeholder.
    public init() {}

    /// A placeholder, as in `$0.id == .parameter`.
    public static var parameter: QueryParameter { QueryParameter() }

    package var sqlFragment: SQLFragment { SQLFragment([.parameter]) }
}

/// `lhs = ?`, the value given when the prepared query runs.
public func == <L: TypedExpression>(lhs: L, rhs: QueryParameter<L.Value>) -> SQLExpression<L.Root, Bool> {
    binary(lhs, "=", rhs.sqlFragment)
}

/// `lhs <> ?`.
public func != <L: TypedExpression>(lhs: L, rhs: QueryParameter<L.Value>) -> SQLExpression<L.Root, Bool> {
    binary(lhs, "<>", rhs.sqlFragment)
}

/// `lhs < ?`.
public func < <L: TypedExpression>(lhs: L, rhs: QueryParameter<L.Value>) -> SQLExpression<L.Root, Bool> {
    binary(lhs, "<", rhs.sqlFragment)
}

/// `lhs <= ?`.
public func <= <L: TypedExpression>(lhs: L, rhs: QueryParameter<L.Value>) -> SQLExpression<L.Root, Bool> {
    binary(lhs, "<=", rhs.sqlFragment)
}

/// `lhs > ?`.
public func > <L: TypedExpression>(lhs: L, rhs: QueryParameter<L.Value>) -> SQLExpression<L.Root, Bool> {
    binary(lhs, ">", rhs.sqlFragment)
}

/// `lhs >= ?`.
public func >= <L: TypedExpression>(lhs: L, rhs: QueryParameter<L.Value>) -> SQLExpression<L.Root, Bool> {
    binary(lhs, ">=", rhs.sqlFragment)
}

extension TypedExpression {
    /// `self BETWEEN ? AND ?`, both bounds given when the prepared query runs.
    ///
    /// ```swift
    /// let byAge = try Person.filter { $0.age.between(.parameter, and: .parameter) }.prepared()
    /// let adults = try byAge.fetchAll(db, 18, 65)
    /// ```
    public func between(_ low: QueryParameter<Value>, and high: QueryParameter<Value>) -> SQLExpression<Root, Bool> {
        SQLExpression(
            sqlFragment.parenthesized + SQLFragment(raw: " BETWEEN ") + low.sqlFragment + SQLFragment(raw: " AND ")
                + high.sqlFragment)
    }
}
