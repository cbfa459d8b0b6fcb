import CofferEngine
import CofferRecords
import Foundation

/// The kind of an attribute as the index stores it, in the order values of different kinds sort.
///
/// Comparisons are made within one kind (`age > 30` only sees numbers), and ordering by an attribute
/// sorts documents first by kind, then by value.
enum AttributeKind: Int64, Sendable {
    case null = 0
    case bool = 1
    case number = 2
    case date = 3
    case string = 4
    case data = 5
    case object = 6
    case array = 7
    /// A double that is not a number: it equals nothing and compares with nothing.
    case notANumber = 8
}

/// One row of the attribute index: a path, the kind of what is there, and its value.
///
/// Scalars keep their natural SQLite storage class (TEXT, INTEGER, REAL, BLOB; a date as REAL seconds
/// since 1970; a Boolean as 0/1), so the `(path, kind, value)` key orders them the way a comparison
/// does. An object or array row holds its member count; a null (and a NaN) holds 0, since a `WITHOUT
/// ROWID` key cannot hold NULL. `ordinal` tells apart the rows of one path (array elements): it counts
/// the earlier rows of the same path in the document, which depends only on array order, so flattening
/// the stored body again finds the same keys. `folded` is the lowercased string when it differs from the
/// string, for case-insensitive matching.
struct Attribute: Equatable {
    var path: String
    var kind: AttributeKind
    var value: DatabaseValue
    var ordinal: Int64
    var folded: String?
}

/// Turns a document into its attribute rows, within the store's limits.
enum AttributeFlattener {
    /// The rows for `document`, or a ``DocumentError`` (carrying `store` and `key`) when it nests deeper
    /// than `maximumDepth` or has more than `maximumCount` attributes. Stops at the first excess, so a
    /// huge or very deep value never allocates more than the limits allow.
    static func attributes(
        of document: DocumentValue, maximumDepth: Int, maximumCount: Int, store: String, key: String?
    ) throws -> [Attribute] {
        var flattener = Walk(
            rows: [], maximumDepth: maximumDepth, maximumCount: maximumCount, store: store, key: key)
        try flattener.visit(document, path: "", depth: 0, repeated: false)
        return flattener.rows
    }

    private struct Walk {
        var rows: [Attribute]
        /// Rows so far per path, for paths under an array (the only ones that repeat).
        var repeats: [String: Int64] = [:]
        let maximumDepth: Int
        let maximumCount: Int
        let store: String
        let key: String?

        mutating func add(_ path: String, _ kind: AttributeKind, _ value: DatabaseValue, _ repeated: Bool) throws {
            guard rows.count < maximumCount else {
                throw DocumentError(
                    reason: .tooManyAttributes, store: store, key: key,
                    detail: "more than \(maximumCount) attributes")
            }
            var folded: String?
            if case .text(let string) = value, Self.mayChangeWhenLowercased(string) {
                let lowered = string.lowercased()
                if lowered != string { folded = lowered }
            }
            var ordinal: Int64 = 0
            if repeated {
                ordinal = repeats[path, default: 0]
                repeats[path] = ordinal + 1
            }
            rows.append(Attribute(path: path, kind: kind, value: value, ordinal: ordinal, folded: folded))
        }

        /// False when `string` is ASCII without capitals (most attribute values), so lowercasing it is
        /// skipped.
        static func mayChangeWhenLowercased(_ string: String) -> Bool {
            string.utf8.contains { $0 >= 0x80 || ($0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z")) }
        }

        /// Recursion is bounded by `maximumDepth` (checked before descending). `path` is the rendered
        /// ``DocumentPath`` of `value`, extended one component at a time; `repeated` is true under an array.
        mutating func visit(_ value: DocumentValue, path: String, depth: Int, repeated: Bool) throws {
            switch value {
            case .null: try add(path, .null, .integer(0), repeated)
            case .bool(let bool): try add(path, .bool, .integer(bool ? 1 : 0), repeated)
            case .int(let int): try add(path, .number, .integer(int), repeated)
            case .double(let double):
                if double.isNaN {
                    try add(path, .notANumber, .integer(0), repeated)
                } else {
                    try add(path, .number, .real(double), repeated)
                }
            case .date(let date): try add(path, .date, .real(date.timeIntervalSince1970), repeated)
            case .string(let string): try add(path, .string, .text(string), repeated)
            case .data(let data): try add(path, .data, .blob(data), repeated)
            case .object(let members):
                try descend(depth)
                if depth > 0 { try add(path, .object, .integer(Int64(members.count)), repeated) }
                for (name, member) in members {
                    let escaped = DocumentPath.escape(name)
                    try visit(member, path: depth > 0 ? path + "." + escaped : escaped, depth: depth + 1, repeated: repeated)
                }
            case .array(let elements):
                try descend(depth)
                try add(path, .array, .integer(Int64(elements.count)), repeated)
                let elementPath = path + "[]"
                for element in elements { try visit(element, path: elementPath, depth: depth + 1, repeated: true) }
            }
        }

        func descend(_ depth: Int) throws {
            guard depth < maximumDepth else {
                throw DocumentError(
                    reason: .nestingTooDeep, store: store, key: key,
                    detail: "objects and arrays nested more than \(maximumDepth) levels deep")
            }
        }
    }
}
