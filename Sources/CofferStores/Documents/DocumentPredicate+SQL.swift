import CofferEngine
import CofferRecords
import Foundation

/// A ``DocumentPredicate`` turned into a `SELECT` of matching document ids over a store's tables.
///
/// Each leaf is one range scan of the `(path_id, kind, value)` key (`SELECT doc_id FROM attr WHERE
/// path_id = (SELECT id FROM paths WHERE path = ?) AND kind = ? AND value > ?`); `&&`, `||` and `!` become `INTERSECT`, `UNION` and `EXCEPT`
/// of those sets (each operand wrapped as a subquery, since SQLite's compound selects take no
/// parentheses). Every value, path, key and bag is bound; only the store's quoted table names and fixed
/// fragments are spliced.
///
/// Strings are matched on bytes so that `%`, `_`, `\` and NUL mean themselves: a prefix as a range
/// (``KeyPrefixRange``), a part with `instr` and a suffix with `substr` on the value cast to a BLOB.
/// Case-insensitive matching compares lowercased forms (the index's `folded` column).
struct PredicateCompiler {
    let schema: DocumentSchema
    let store: String
    private(set) var arguments: [DatabaseValue] = []

    init(schema: DocumentSchema, store: String) {
        self.schema = schema
        self.store = store
    }

    /// The SQL selecting the ids (column `doc_id`) of the documents `predicate` holds for; its arguments
    /// are appended to ``arguments``.
    mutating func idSet(_ predicate: DocumentPredicate) throws -> String {
        switch predicate {
        case .all:
            return "SELECT id AS doc_id FROM \(schema.documents)"
        case .compare(let path, let comparison, let value):
            return try compare(path, comparison, value)
        case .between(let path, let lower, let upper):
            let lowerColumn = try Self.column(for: lower)
            guard lowerColumn.kind == (try Self.column(for: upper)).kind, lowerColumn.kind != .null else {
                throw invalid("between needs two bounds of one kind (not null)")
            }
            return leaf(
                path, "kind = ? AND value BETWEEN ? AND ?",
                [.integer(lowerColumn.kind.rawValue), lowerColumn.value, try Self.column(for: upper).value])
        case .isIn(let path, let values):
            guard !values.isEmpty else { return "SELECT doc_id FROM \(schema.attributes) WHERE 0" }
            var terms: [String] = []
            var termArguments: [DatabaseValue] = []
            var byKind: [AttributeKind: [DatabaseValue]] = [:]
            for value in values {
                let column = try Self.column(for: value)
                byKind[column.kind, default: []].append(column.value)
            }
            for (kind, kindValues) in byKind.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                if kind == .null {
                    terms.append("kind = ?")
                    termArguments.append(.integer(kind.rawValue))
                } else {
                    terms.append(
                        "(kind = ? AND value IN (\(Array(repeating: "?", count: kindValues.count).joined(separator: ", "))))")
                    termArguments += [.integer(kind.rawValue)] + kindValues
                }
            }
            return leaf(path, "(" + terms.joined(separator: " OR ") + ")", termArguments)
        case .string(let path, let match, let pattern, let caseInsensitive):
            let column = caseInsensitive ? "coalesce(folded, value)" : "value"
            let needle = caseInsensitive ? pattern.lowercased() : pattern
            let condition = Self.stringCondition(match, needle, column: column)
            return leaf(path, "kind = ? AND " + condition.sql, [.integer(AttributeKind.string.rawValue)] + condition.arguments)
        case .isNull(let path):
            return leaf(path, "kind = ?", [.integer(AttributeKind.null.rawValue)])
        case .exists(let path):
            return leaf(path, "1", [])
        case .key(let match, let pattern):
            let condition: (sql: String, arguments: [DatabaseValue]) =
                match.map { Self.stringCondition($0, pattern, column: "key") } ?? ("key = ?", [.text(pattern)])
            arguments += condition.arguments
            return "SELECT id AS doc_id FROM \(schema.documents) WHERE \(condition.sql)"
        case .inBag(let bag):
            arguments.append(.text(bag))
            return "SELECT doc_id FROM \(schema.bags) WHERE bag = ?"
        case .and(let operands):
            return try combine(operands, "INTERSECT")
        case .or(let operands):
            guard !operands.isEmpty else { return "SELECT doc_id FROM \(schema.attributes) WHERE 0" }
            return try combine(operands, "UNION")
        case .not(let operand):
            let all = "SELECT id AS doc_id FROM \(schema.documents)"
            return "\(all) EXCEPT SELECT doc_id FROM (\(try idSet(operand)))"
        }
    }

    private mutating func combine(_ operands: [DocumentPredicate], _ operation: String) throws -> String {
        guard !operands.isEmpty else { return try idSet(.all) }
        if operands.count == 1 { return try idSet(operands[0]) }
        var parts: [String] = []
        for operand in operands { parts.append("SELECT doc_id FROM (\(try idSet(operand)))") }
        return parts.joined(separator: " \(operation) ")
    }

    private mutating func compare(_ path: DocumentPath?, _ comparison: DocumentPredicate.Comparison, _ value: DocumentValue)
        throws -> String
    {
        let column = try Self.column(for: value)
        if comparison == .notEqual {
            let present = leaf(path, "1", [])
            return "\(present) EXCEPT SELECT doc_id FROM (\(try compare(path, .equal, value)))"
        }
        if column.kind == .null {
            guard comparison == .equal else { return "SELECT doc_id FROM \(schema.attributes) WHERE 0" }
            return leaf(path, "kind = ?", [.integer(AttributeKind.null.rawValue)])
        }
        return leaf(path, "kind = ? AND value \(comparison.rawValue) ?", [.integer(column.kind.rawValue), column.value])
    }

    /// `SELECT doc_id FROM attr WHERE path = ? AND condition`, or over every path when `path` is nil.
    private mutating func leaf(_ path: DocumentPath?, _ condition: String, _ conditionArguments: [DatabaseValue]) -> String {
        if let path {
            arguments.append(.text(path.description))
            arguments += conditionArguments
            return "SELECT doc_id FROM \(schema.attributes) WHERE \(schema.pathMatch) AND \(condition)"
        }
        arguments += conditionArguments
        return "SELECT doc_id FROM \(schema.attributes) WHERE \(condition)"
    }

    private func invalid(_ detail: String) -> DocumentError {
        DocumentError(reason: .invalidPredicate, store: store, key: nil, detail: detail)
    }

    /// The kind and stored form of a scalar value (what ``AttributeFlattener`` writes for it).
    static func column(for value: DocumentValue) throws -> (kind: AttributeKind, value: DatabaseValue) {
        switch value {
        case .null: return (.null, .null)
        case .bool(let bool): return (.bool, .integer(bool ? 1 : 0))
        case .int(let int): return (.number, .integer(int))
        case .double(let double): return (.number, double.isNaN ? .null : .real(double))
        case .date(let date): return (.date, .real(date.timeIntervalSince1970))
        case .string(let string): return (.string, .text(string))
        case .data(let data): return (.data, .blob(data))
        case .object, .array:
            throw DocumentError(
                reason: .invalidPredicate, store: "", key: nil,
                detail: "objects and arrays cannot be compared; compare their attributes")
        }
    }

    /// A byte-exact string match on `column` (see the type's description).
    static func stringCondition(
        _ match: DocumentPredicate.StringMatch, _ pattern: String, column: String
    ) -> (sql: String, arguments: [DatabaseValue]) {
        let bytes = Data(pattern.utf8)
        switch match {
        case .beginsWith:
            let range = KeyPrefixRange.condition(pattern, column: column)
            return (range.sql, range.arguments.values)
        case .contains:
            return ("instr(CAST(\(column) AS BLOB), ?) > 0", [.blob(bytes)])
        case .endsWith:
            guard !bytes.isEmpty else { return ("1", []) }
            return ("substr(CAST(\(column) AS BLOB), ?) = ?", [.integer(-Int64(bytes.count)), .blob(bytes)])
        }
    }
}
