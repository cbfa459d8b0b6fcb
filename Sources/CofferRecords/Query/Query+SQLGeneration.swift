import CofferEngine
import Foundation

// SQL generation: the one place a query becomes text. Clauses come in SQLite's order; values stay bound.

extension Query {
    /// The `FROM … WHERE … GROUP BY … HAVING … ORDER BY … LIMIT …` tail shared by every statement.
    func tail(from table: SQLFragment, includeOrderAndLimit: Bool = true) -> SQLFragment {
        SQLFragment(raw: " FROM ") + table + clauses(includeOrderAndLimit: includeOrderAndLimit)
    }

    /// `WHERE … GROUP BY … HAVING … ORDER BY … LIMIT …`, the part of the tail after the table.
    func clauses(includeOrderAndLimit: Bool = true) -> SQLFragment {
        var sql = whereClause
        if !groupings.isEmpty { sql += SQLFragment(raw: " GROUP BY ") + SQLFragment.join(groupings, separator: ", ") }
        if !havings.isEmpty { sql += SQLFragment(raw: " HAVING ") + Self.conjunction(havings) }
        if includeOrderAndLimit { sql += orderAndLimit }
        return sql
    }

    var whereClause: SQLFragment { Self.whereClause(filters) }

    static func whereClause(_ filters: [SQLFragment]) -> SQLFragment {
        filters.isEmpty ? SQLFragment() : SQLFragment(raw: " WHERE ") + conjunction(filters)
    }

    var orderAndLimit: SQLFragment {
        var sql = SQLFragment()
        if !orderings.isEmpty { sql += SQLFragment(raw: " ORDER BY ") + SQLFragment.join(orderings, separator: ", ") }
        if let limitValue {
            // Bound, so that pages of one query share a prepared statement.
            sql += SQLFragment(raw: " LIMIT ") + SQLFragment(value: .integer(Int64(limitValue)))
            if let offsetValue { sql += SQLFragment(raw: " OFFSET ") + SQLFragment(value: .integer(Int64(offsetValue))) }
        }
        return sql
    }

    package static func conjunction(_ terms: [SQLFragment]) -> SQLFragment {
        terms.count == 1 ? terms[0] : SQLFragment.join(terms.map(\.parenthesized), separator: " AND ")
    }

    static var table: SQLFragment { SQLFragment([.identifier(Root.tableName)]) }

    /// The declared columns, in order: the selection every record fetch uses.
    static var recordSelection: SQLFragment {
        SQLFragment.join(Root.columnDefinitions.map { $0.selection() }, separator: ", ")
    }

    /// `SELECT <columns> FROM "table" …`. The head is rendered once per record type (see
    /// ``RecordSelectHeads``): rebuilding and requoting it cost as much as SQLite's own point lookup.
    var selectFragment: SQLFragment {
        if rowSource != nil { return RecordSelectHeads.shared.head(for: Root.self, from: false) + tail(from: source) }
        return RecordSelectHeads.shared.head(for: Root.self, from: true) + clauses()
    }

    /// `SELECT count(*) …`, wrapping the query when grouping or limits change what is counted.
    var countFragment: SQLFragment {
        if groupings.isEmpty && limitValue == nil {
            return SQLFragment(raw: "SELECT count(*)") + tail(from: source, includeOrderAndLimit: false)
        }
        return SQLFragment(raw: "SELECT count(*) FROM (") + selectFragment + SQLFragment(raw: ")")
    }

    /// `SELECT EXISTS (SELECT 1 …)`.
    var existsFragment: SQLFragment {
        SQLFragment(raw: "SELECT EXISTS (SELECT 1") + tail(from: source) + SQLFragment(raw: ")")
    }

    /// `DELETE FROM "table" WHERE …`. Order and limit are refused: SQLite builds without them by default.
    var deleteFragment: SQLFragment { deleteFragment(table: nil) }

    /// `DELETE FROM …` where `table` replaces the table's name: `main."T"` while a live migration's union
    /// view hides `T`.
    func deleteFragment(table: String?) -> SQLFragment {
        SQLFragment(raw: "DELETE FROM ") + (table.map { SQLFragment(raw: $0) } ?? Self.table) + Self.whereClause(wholeRowFilters)
    }

    /// `UPDATE "table" SET … WHERE …`.
    func updateFragment(_ assignments: [ColumnAssignment<Root>], table: String? = nil) -> SQLFragment {
        let sets = assignments.map {
            SQLFragment([.identifier($0.columnName)]) + SQLFragment(raw: " = ")
                + Root.compressing($0.value, forColumn: $0.columnName)
        }
        return SQLFragment(raw: "UPDATE ") + (table.map { SQLFragment(raw: $0) } ?? Self.table) + SQLFragment(raw: " SET ")
            + SQLFragment.join(sets, separator: ", ") + Self.whereClause(wholeRowFilters)
    }

    /// Checks that a statement can run on every row the filters pick (no group, order or limit).
    func requireWholeRows(_ operation: String) throws {
        guard groupings.isEmpty, havings.isEmpty, orderings.isEmpty, limitValue == nil else {
            throw CofferError(code: .apiMisuse, message: "\(operation) takes filters only (no group, order or limit)")
        }
    }
}

/// `SELECT "a", "b", … FROM "table"` for each record type, rendered once and kept as raw SQL; and
/// `SELECT "a", "b", …` alone, for a query that reads another source first (``Query/source``).
///
/// Every record fetch starts with it; the columns and table of a `@Table` type never change, so the text
/// is the same each time. An identifier that cannot be rendered keeps its error, thrown at render time.
final class RecordSelectHeads: @unchecked Sendable {
    static let shared = RecordSelectHeads()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var heads: [Key: SQLFragment] = [:]

    private struct Key: Hashable {
        let type: ObjectIdentifier
        let from: Bool
    }

    /// The head for `type`, with ` FROM "table"` when `from` is true.
    func head<Root: TableRecord>(for type: Root.Type, from: Bool) -> SQLFragment {
        let key = Key(type: ObjectIdentifier(type), from: from)
        if let head = lock.withLock({ heads[key] }) { return head }
        let head: SQLFragment
        do {
            var fragment = SQLFragment(raw: "SELECT ") + Query<Root>.recordSelection
            if from { fragment += SQLFragment(raw: " FROM ") + Query<Root>.table }
            head = SQLFragment(raw: try fragment.render().sql)
        } catch {
            head = SQLFragment([.invalid(error as? CofferError ?? CofferError(code: .apiMisuse, message: "\(error)"))])
        }
        lock.withLock { heads[key] = head }
        return head
    }
}
