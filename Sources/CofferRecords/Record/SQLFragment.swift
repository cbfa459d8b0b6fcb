import CofferEngine

/// A piece of SQL kept as parts, so that values stay values until the last moment.
///
/// Every layer of the query interface produces fragments; only ``SQLFragment/render(_:)`` turns them into
/// text. Values become `?` placeholders with their arguments beside them (or, in schema statements where
/// SQLite accepts no parameters, safely quoted literals), identifiers are always double-quoted, and raw
/// text only ever comes from Coffer's own keywords or from the developer's ``SQL`` literal.
public struct SQLFragment: Sendable {
    package enum Part: Sendable {
        /// SQL text written by Coffer or by the developer in a literal (never a user value).
        case raw(String)
        /// A value: a bound parameter, or a literal in schema statements.
        case value(DatabaseValue)
        /// A column of a table, qualified with the table in joins.
        case column(table: String, name: String)
        /// An identifier to quote.
        case identifier(String)
        /// A value that could not be encoded: rendering throws this error.
        case invalid(CofferError)
        /// A value supplied each time a ``PreparedQuery`` runs (see ``QueryParameter``).
        case parameter
    }

    package var parts: [Part]

    package init(_ parts: [Part] = []) { self.parts = parts }

    package init(raw text: String) { self.parts = [.raw(text)] }

    package init(value: DatabaseValue) { self.parts = [.value(value)] }

    package static func + (lhs: SQLFragment, rhs: SQLFragment) -> SQLFragment {
        SQLFragment(lhs.parts + rhs.parts)
    }

    package static func += (lhs: inout SQLFragment, rhs: SQLFragment) {
        lhs.parts += rhs.parts
    }

    /// `self` between parentheses.
    package var parenthesized: SQLFragment { SQLFragment(raw: "(") + self + SQLFragment(raw: ")") }

    /// Fragments joined with a separator.
    package static func join(_ fragments: [SQLFragment], separator: String) -> SQLFragment {
        var result = SQLFragment()
        for (offset, fragment) in fragments.enumerated() {
            if offset > 0 { result.parts.append(.raw(separator)) }
            result += fragment
        }
        return result
    }

    /// How values and columns are written.
    package struct RenderOptions {
        /// Write values as literals instead of `?` (schema statements: CHECK, DEFAULT).
        package var inlineValues = false
        /// Qualify columns with their table (joins).
        package var qualifyColumns = false

        package init(inlineValues: Bool = false, qualifyColumns: Bool = false) {
            self.inlineValues = inlineValues
            self.qualifyColumns = qualifyColumns
        }
    }

    /// The SQL text and the arguments for its `?` placeholders.
    package func render(_ options: RenderOptions = RenderOptions()) throws -> (sql: String, arguments: StatementArguments) {
        let (sql, values, parameterPositions) = try renderTemplate(options)
        guard parameterPositions.isEmpty else {
            throw CofferError(
                code: .apiMisuse,
                message: "a query with a parameter runs through a PreparedQuery: call prepared() and pass arguments",
                sql: sql)
        }
        return (sql, StatementArguments(values))
    }

    /// The SQL text, the values of its `?` placeholders, and which of those (0-based) are parameters
    /// supplied at each execution (their value in `values` is a NULL stand-in).
    func renderTemplate(
        _ options: RenderOptions = RenderOptions()
    ) throws -> (sql: String, values: [DatabaseValue], parameterPositions: [Int]) {
        var sql = ""
        var values: [DatabaseValue] = []
        var parameterPositions: [Int] = []
        for part in parts {
            switch part {
            case .raw(let text):
                sql += text
            case .value(let value):
                if options.inlineValues {
                    sql += try SQLFragment.literal(value)
                } else {
                    sql += "?"
                    values.append(value)
                }
            case .column(let table, let name):
                if options.qualifyColumns { sql += try SQLIdentifier.validated(table) + "." }
                sql += try SQLIdentifier.validated(name)
            case .identifier(let name):
                sql += try SQLIdentifier.validated(name)
            case .invalid(let error):
                throw error
            case .parameter:
                // Schema statements cannot take parameters; SQLite would refuse `?` there anyway.
                guard !options.inlineValues else {
                    throw CofferError(code: .apiMisuse, message: "a schema statement cannot take a query parameter")
                }
                sql += "?"
                parameterPositions.append(values.count)
                values.append(.null)
            }
        }
        return (sql, values, parameterPositions)
    }

    /// A value as an SQL literal, for the few places SQLite takes no parameters (DEFAULT, CHECK).
    ///
    /// Text is single-quoted with quotes doubled; a NUL byte is refused because SQLite would end the
    /// statement there.
    package static func literal(_ value: DatabaseValue) throws -> String {
        switch value {
        case .null:
            return "NULL"
        case .integer(let int):
            return String(int)
        case .real(let double):
            guard double.isFinite else {
                throw CofferError(code: .apiMisuse, message: "a non-finite REAL cannot be written as a literal")
            }
            return "\(double)"
        case .text(let text):
            guard !text.utf8.contains(0) else {
                throw CofferError(code: .apiMisuse, message: "a text literal cannot contain a NUL byte")
            }
            return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
        case .blob(let data):
            return "X'" + data.map { String($0, radix: 16).leftPadded(to: 2) }.joined() + "'"
        }
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
