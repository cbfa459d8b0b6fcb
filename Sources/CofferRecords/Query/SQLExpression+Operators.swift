// Comparison, logical and arithmetic operators on typed expressions.
//
// Each operator requires both sides to share `Root` (the same table) and a compatible `Value` (the same
// Swift type, or one side the optional of the other), so `$0.conversationID == "x"` and comparisons with
// another table's columns do not compile.

import CofferEngine

func binary<Root, Value>(
    _ lhs: some SQLExpressionConvertible, _ op: String, _ rhs: SQLFragment
) -> SQLExpression<Root, Value> {
    SQLExpression(lhs.sqlFragment.parenthesized + SQLFragment(raw: " \(op) ") + rhs.parenthesized)
}

// MARK: Expression and value

/// `lhs = value`, or `lhs IS NULL` when the value is nil.
public func == <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, Bool> where L.Value: Encodable {
    let value = SQLFragment.encoding(rhs)
    if value.isNullValue { return SQLExpression(lhs.sqlFragment.parenthesized + SQLFragment(raw: " IS NULL")) }
    return binary(lhs, "=", value)
}

/// `lhs <> value`, or `lhs IS NOT NULL` when the value is nil.
public func != <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, Bool> where L.Value: Encodable {
    let value = SQLFragment.encoding(rhs)
    if value.isNullValue { return SQLExpression(lhs.sqlFragment.parenthesized + SQLFragment(raw: " IS NOT NULL")) }
    return binary(lhs, "<>", value)
}

/// `lhs < value`.
public func < <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, Bool> where L.Value: Encodable {
    binary(lhs, "<", .encoding(rhs))
}

/// `lhs <= value`.
public func <= <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, Bool> where L.Value: Encodable {
    binary(lhs, "<=", .encoding(rhs))
}

/// `lhs > value`.
public func > <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, Bool> where L.Value: Encodable {
    binary(lhs, ">", .encoding(rhs))
}

/// `lhs >= value`.
public func >= <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, Bool> where L.Value: Encodable {
    binary(lhs, ">=", .encoding(rhs))
}

// MARK: Expression and expression

/// `lhs = rhs` for two expressions of the same type.
public func == <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == R.Value {
    binary(lhs, "=", rhs.sqlFragment)
}

/// `lhs = rhs` where the right side is the optional of the left (`message.conversationID == conversation.id`).
public func == <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, R.Value == L.Value? {
    binary(lhs, "=", rhs.sqlFragment)
}

/// `lhs = rhs` where the left side is the optional of the right.
public func == <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == R.Value? {
    binary(lhs, "=", rhs.sqlFragment)
}

/// `lhs <> rhs` for two expressions of the same type.
public func != <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == R.Value {
    binary(lhs, "<>", rhs.sqlFragment)
}

/// `lhs < rhs` for two expressions of the same type.
public func < <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == R.Value {
    binary(lhs, "<", rhs.sqlFragment)
}

/// `lhs > rhs` for two expressions of the same type.
public func > <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == R.Value {
    binary(lhs, ">", rhs.sqlFragment)
}

// MARK: Logic

/// `lhs AND rhs`.
public func && <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == Bool, R.Value == Bool {
    binary(lhs, "AND", rhs.sqlFragment)
}

/// `lhs OR rhs`.
public func || <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, Bool>
where L.Root == R.Root, L.Value == Bool, R.Value == Bool {
    binary(lhs, "OR", rhs.sqlFragment)
}

/// `NOT operand`.
public prefix func ! <E: TypedExpression>(operand: E) -> SQLExpression<E.Root, Bool> where E.Value == Bool {
    SQLExpression(SQLFragment(raw: "NOT ") + operand.sqlFragment.parenthesized)
}

// MARK: Arithmetic

/// `lhs + value` (`$0.score + 1` in an update).
public func + <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, L.Value>
where L.Value: Numeric & Encodable {
    binary(lhs, "+", .encoding(rhs))
}

/// `lhs - value`.
public func - <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, L.Value>
where L.Value: Numeric & Encodable {
    binary(lhs, "-", .encoding(rhs))
}

/// `lhs * value`.
public func * <L: TypedExpression>(lhs: L, rhs: L.Value) -> SQLExpression<L.Root, L.Value>
where L.Value: Numeric & Encodable {
    binary(lhs, "*", .encoding(rhs))
}

/// `lhs + rhs` for two numeric expressions of the same type.
public func + <L: TypedExpression, R: TypedExpression>(lhs: L, rhs: R) -> SQLExpression<L.Root, L.Value>
where L.Root == R.Root, L.Value == R.Value, L.Value: Numeric {
    binary(lhs, "+", rhs.sqlFragment)
}
