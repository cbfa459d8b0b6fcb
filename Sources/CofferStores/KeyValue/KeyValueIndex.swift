import CofferEngine
import CofferRecords

/// A secondary index field of a store: a name, and how to extract it from values.
///
/// Conform to it through ``KeyValueIndexField``; the store only needs the name and the extraction.
public protocol KeyValueIndexDefinition: Sendable {
    /// The field's name, unique within the store.
    var name: String { get }
    /// The field's value for a value being saved, or nil when it has none (wrong type, or no such field).
    func indexValue(of value: Any) -> DatabaseValue?
}

/// A typed index field: values of type `Root` are indexed by the `Field` the closure extracts.
///
/// Declare fields once, pass them in the store's ``KeyValueStore/Configuration/indexes``, and use them
/// to build predicates and orderings:
///
/// ```swift
/// extension Post {
///     static let publishedAt = KeyValueIndexField<Post, Date>("publishedAt") { $0.publishedAt }
///     static let likes = KeyValueIndexField<Post, Int>("likes") { $0.likes }
/// }
/// let newest = try store.items(Post.self, matching: KeyValueQuery(bucket: "feed")
///     .filter(Post.publishedAt < cutoff)
///     .order(by: Post.publishedAt.descending)
///     .limit(20))
/// ```
///
/// Values of other types than `Root` get no row for the field, and a query that filters or sorts on
/// the field skips them. Fields added to an existing store apply to items written from then on, and to
/// older ones after ``KeyValueStore/rebuildIndexes(decodingAs:in:)``.
public struct KeyValueIndexField<Root, Field: DatabaseValueConvertible>: KeyValueIndexDefinition {
    /// The field's name.
    public let name: String
    private let extract: @Sendable (Root) -> Field?

    /// Declares a field called `name`, extracted from each `Root` value by `extract`.
    public init(_ name: String, _ extract: @escaping @Sendable (Root) -> Field?) {
        self.name = name
        self.extract = extract
    }

    /// The extracted field as a database value, when `value` is a `Root` and has the field.
    public func indexValue(of value: Any) -> DatabaseValue? {
        guard let root = value as? Root, let field = extract(root) else { return nil }
        let stored = field.databaseValue
        return stored.isNull ? nil : stored
    }

    /// Sorts by this field, smallest first.
    public var ascending: KeyValueOrdering { KeyValueOrdering(field: name, descending: false) }
    /// Sorts by this field, largest first.
    public var descending: KeyValueOrdering { KeyValueOrdering(field: name, descending: true) }

    /// Items whose field is one of `values`.
    public func isIn(_ values: [Field]) -> KeyValuePredicate {
        KeyValuePredicate(field: name, comparison: .in, values: values.map(\.databaseValue))
    }

    /// Items whose field lies in `range` (both bounds included).
    public func isBetween(_ lower: Field, and upper: Field) -> KeyValuePredicate {
        KeyValuePredicate(field: name, comparison: .between, values: [lower.databaseValue, upper.databaseValue])
    }

    /// Items whose field equals the value.
    public static func == (field: Self, value: Field) -> KeyValuePredicate { field.compare(.equal, value) }
    /// Items whose field differs from the value.
    public static func != (field: Self, value: Field) -> KeyValuePredicate { field.compare(.notEqual, value) }
    /// Items whose field is less than the value.
    public static func < (field: Self, value: Field) -> KeyValuePredicate { field.compare(.less, value) }
    /// Items whose field is at most the value.
    public static func <= (field: Self, value: Field) -> KeyValuePredicate { field.compare(.lessOrEqual, value) }
    /// Items whose field is greater than the value.
    public static func > (field: Self, value: Field) -> KeyValuePredicate { field.compare(.greater, value) }
    /// Items whose field is at least the value.
    public static func >= (field: Self, value: Field) -> KeyValuePredicate { field.compare(.greaterOrEqual, value) }

    private func compare(_ comparison: KeyValuePredicate.Comparison, _ value: Field) -> KeyValuePredicate {
        KeyValuePredicate(field: name, comparison: comparison, values: [value.databaseValue])
    }
}

/// A condition on one indexed field, built with the operators of ``KeyValueIndexField``.
public struct KeyValuePredicate: Sendable {
    enum Comparison: String, Sendable {
        case equal = "="
        case notEqual = "<>"
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case `in` = "IN"
        case between = "BETWEEN"
    }

    let field: String
    let comparison: Comparison
    let values: [DatabaseValue]

    /// The SQL condition on `column`, with its arguments.
    func sql(column: String) -> (sql: String, arguments: StatementArguments) {
        switch comparison {
        case .in:
            guard !values.isEmpty else { return ("0", []) }
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return ("\(column) IN (\(marks))", StatementArguments(values))
        case .between:
            return ("\(column) BETWEEN ? AND ?", StatementArguments(values))
        default:
            return ("\(column) \(comparison.rawValue) ?", StatementArguments(values))
        }
    }
}

/// A sort order: an indexed field (or the key) and a direction.
public struct KeyValueOrdering: Sendable {
    let field: String?
    let descending: Bool

    /// Sorts by key, in UTF-8 byte order.
    public static let keyAscending = KeyValueOrdering(field: nil, descending: false)
    /// Sorts by key, in reverse UTF-8 byte order.
    public static let keyDescending = KeyValueOrdering(field: nil, descending: true)
}

/// What to fetch from a store: a bucket, conditions on indexed fields, an order and a page.
///
/// ```swift
/// let page = KeyValueQuery(bucket: "feed")
///     .filter(Post.publishedAt < cutoff)
///     .order(by: Post.publishedAt.descending)
///     .limit(20)
/// let posts = try store.items(Post.self, matching: page)
/// let total = try store.count(matching: page)
/// ```
///
/// Expired items never match. Items are paged in the requested order, then by key.
public struct KeyValueQuery: Sendable {
    /// The bucket to search; nil searches every bucket.
    public var bucket: String?
    /// Only keys that start with this prefix (compared exactly, like ``KeyValueStore/delete(keysWithPrefix:in:)``).
    public var keyPrefix: String?
    /// Conditions that must all hold.
    public var predicates: [KeyValuePredicate]
    /// Sort orders, most significant first; ties are broken by key.
    public var orderings: [KeyValueOrdering]
    /// At most this many items; nil for all.
    public var limit: Int?
    /// Skip this many items first.
    public var offset: Int

    /// A query over `bucket` (the default bucket unless given; nil for all buckets).
    public init(bucket: String? = KeyValueStore.defaultBucket) {
        self.bucket = bucket
        self.keyPrefix = nil
        self.predicates = []
        self.orderings = []
        self.limit = nil
        self.offset = 0
    }

    /// Adds a condition.
    public func filter(_ predicate: KeyValuePredicate) -> KeyValueQuery {
        var query = self
        query.predicates.append(predicate)
        return query
    }

    /// Keeps only keys that start with `prefix`.
    public func keys(withPrefix prefix: String) -> KeyValueQuery {
        var query = self
        query.keyPrefix = prefix
        return query
    }

    /// Adds a sort order after the existing ones.
    public func order(by ordering: KeyValueOrdering) -> KeyValueQuery {
        var query = self
        query.orderings.append(ordering)
        return query
    }

    /// Limits the result to one page.
    public func limit(_ limit: Int, offset: Int = 0) -> KeyValueQuery {
        var query = self
        query.limit = limit
        query.offset = offset
        return query
    }
}
