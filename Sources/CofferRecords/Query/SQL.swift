import CofferEngine

/// Hand-written SQL that cannot inject: every interpolated value becomes a bound `?` parameter, and
/// identifiers are interpolated only through `\(identifier:)`, which validates and double-quotes them.
///
/// ```swift
/// let name = "Robert'); DROP TABLE student; --"
/// try db.execute(SQL("INSERT INTO \(identifier: table) (name) VALUES (\(name))"))
/// // INSERT INTO "student" (name) VALUES (?)   — with "Robert'); DROP TABLE student; --" bound
/// let rows = try db.fetchAll(SQL("SELECT * FROM player WHERE score > \(minimum)"))
/// ```
///
/// The literal parts are the developer's source code; no API turns a runtime `String` into raw SQL
/// through this type.
public struct SQL: Sendable, ExpressibleByStringInterpolation {
    package var fragment: SQLFragment

    package init(fragment: SQLFragment) { self.fragment = fragment }

    /// A literal with no interpolation.
    public init(stringLiteral value: StaticString) {
        fragment = SQLFragment(raw: value.description)
    }

    /// A literal built by interpolation.
    public init(stringInterpolation: StringInterpolation) {
        fragment = stringInterpolation.fragment
    }

    /// Copies another literal (`SQL("...")` reads better at call sites).
    public init(_ sql: SQL) { self = sql }

    /// The SQL text with `?` placeholders and the values bound to them.
    ///
    /// ```swift
    /// let (sql, arguments) = try SQL("SELECT \(1)").build()   // "SELECT ?", [1]
    /// ```
    public func build() throws -> (sql: String, arguments: StatementArguments) {
        try fragment.render()
    }

    /// Builds ``SQL`` literals: text segments are kept raw, interpolations are bound or quoted.
    public struct StringInterpolation: StringInterpolationProtocol {
        var fragment = SQLFragment()

        /// Reserves room for the literal.
        public init(literalCapacity: Int, interpolationCount: Int) {}

        /// Appends source text of the literal.
        public mutating func appendLiteral(_ literal: StaticString) {
            fragment.parts.append(.raw(literal.description))
        }

        /// Appends a value as a bound `?` parameter (`nil` binds NULL).
        public mutating func appendInterpolation(_ value: (some DatabaseValueConvertible)?) {
            fragment.parts.append(.value(value?.databaseValue ?? .null))
        }

        /// Appends a table, column or index name, validated and double-quoted.
        public mutating func appendInterpolation(identifier name: String) {
            fragment.parts.append(.identifier(name))
        }

        /// Appends another literal, keeping its bound values.
        public mutating func appendInterpolation(_ sql: SQL) {
            fragment += sql.fragment
        }

        /// Appends a typed expression, such as a column (`\(Player.columns.score)`).
        public mutating func appendInterpolation(_ expression: some SQLExpressionConvertible) {
            fragment += expression.sqlFragment
        }

        /// Appends a list of values as `?, ?, ?` (for `IN (...)`).
        public mutating func appendInterpolation(list values: [some DatabaseValueConvertible]) {
            fragment += SQLFragment.join(values.map { SQLFragment(value: $0.databaseValue) }, separator: ", ")
        }
    }
}
