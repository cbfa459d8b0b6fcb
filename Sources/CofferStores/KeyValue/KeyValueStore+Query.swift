import CofferEngine
import CofferRecords
import Foundation

/// An aggregate over an indexed field.
enum KeyValueAggregate: String {
    case count
    case sum = "total"
    case average = "avg"
    case minimum = "min"
    case maximum = "max"
}

/// A ``KeyValueQuery`` turned into SQL over a store's tables.
///
/// Items are aliased `i`; each indexed field the query mentions is joined once as `f0`, `f1`… from the
/// index table (an inner join: items without the field do not match). Everything is bound; only the
/// quoted table names and fixed SQL fragments are spliced. A field used only for sorting is joined as
/// well: items without it are left out, from counts too.
///
/// The index drives: `f0` is the field of the first predicate that can use `(field, bucket, value)`
/// (any comparison but `!=`), and the query reads `f0 CROSS JOIN i`, which SQLite never reorders.
/// Without statistics SQLite 3.15 would otherwise walk the whole bucket by `(bucket, key)` to skip the
/// sort, probing the index once per item. With no such predicate the first joined field drives too
/// (it has at most as many rows as the bucket), unless a key prefix narrows the items more.
struct CompiledQuery {
    private var joins: [(alias: String, on: String)] = []
    private(set) var joinArguments: StatementArguments = []
    private(set) var conditions: [String] = []
    private(set) var conditionArguments: StatementArguments = []
    private var aliases: [String: String] = [:]
    let items: String
    let index: String
    let bucket: String?
    /// Whether `f0`, once joined, is read first (`f0 CROSS JOIN i`).
    private let indexDrives: Bool

    init(_ query: KeyValueQuery, schema: KeyValueSchema, now: Date) {
        items = schema.items
        index = schema.index
        bucket = query.bucket
        let driver = query.predicates.first { $0.comparison != .notEqual }
        indexDrives = driver != nil || query.keyPrefix == nil
        if let driver { _ = alias(for: driver.field) }
        conditions.append("(i.expires_at IS NULL OR i.expires_at > ?)")
        conditionArguments += [now]
        if let bucket = query.bucket {
            conditions.append("i.bucket = ?")
            conditionArguments += [bucket]
        }
        if let prefix = query.keyPrefix {
            let range = KeyPrefixRange.condition(prefix, column: "i.key")
            conditions.append(range.sql)
            conditionArguments += range.arguments
        }
        for predicate in query.predicates {
            let condition = predicate.sql(column: alias(for: predicate.field) + ".value")
            conditions.append(condition.sql)
            conditionArguments += condition.arguments
        }
        // Sorting on a field joins it too, so counts agree with the items a sorted query returns.
        for field in query.orderings.compactMap(\.field) { _ = alias(for: field) }
    }

    /// The alias of the joined index rows for `field`, joining them on first use.
    mutating func alias(for field: String) -> String {
        if let alias = aliases[field] { return alias }
        let alias = "f\(aliases.count)"
        aliases[field] = alias
        var on = "\(alias).item_id = i.id AND \(alias).field = ?"
        joinArguments += [field]
        if let bucket {
            on += " AND \(alias).bucket = ?"
            joinArguments += [bucket]
        }
        joins.append((alias, on))
        return alias
    }

    /// `SELECT <columns> FROM … WHERE …` and its arguments.
    func select(_ columns: String) -> (sql: String, arguments: StatementArguments) {
        var from = "\(items) AS i"
        var joined = joins[...]
        if indexDrives, let first = joined.popFirst() {
            from = "\(index) AS \(first.alias) CROSS JOIN \(items) AS i ON \(first.on)"
        }
        let rest = joined.map { " JOIN \(index) AS \($0.alias) ON \($0.on)" }.joined()
        return (
            "SELECT \(columns) FROM \(from)\(rest) WHERE \(conditions.joined(separator: " AND "))",
            joinArguments + conditionArguments
        )
    }

    /// The ORDER BY / LIMIT tail for `query`.
    mutating func orderAndPage(_ query: KeyValueQuery) -> (sql: String, arguments: StatementArguments) {
        var terms: [String] = []
        for ordering in query.orderings {
            let column = ordering.field.map { alias(for: $0) + ".value" } ?? "i.key"
            terms.append(column + (ordering.descending ? " DESC" : ""))
        }
        terms.append("i.key")
        terms.append("i.bucket")
        return (
            " ORDER BY \(terms.joined(separator: ", ")) LIMIT ? OFFSET ?",
            [query.limit ?? -1, max(0, query.offset)]
        )
    }
}

extension KeyValueStore {
    // MARK: Queries

    /// The items matching `query`, decoded as `Value`, in the query's order.
    ///
    /// ```swift
    /// // The 20 newest posts in bucket "feed" published before `cutoff`:
    /// let page = try store.items(Post.self, matching: KeyValueQuery(bucket: "feed")
    ///     .filter(Post.publishedAt < cutoff).order(by: Post.publishedAt.descending).limit(20))
    /// ```
    ///
    /// - Throws: ``KeyValueError`` naming the first item that does not decode as `Value`.
    public func items<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self, matching query: KeyValueQuery
    ) throws -> [KeyValueItem<Value>] {
        let now = configuration.now()
        let statement = itemsStatement(query, now: now)
        let stored = try database.read { db in try Self.fetchItems(statement, in: db) }
        return try stored.map { try makeItem(Value.self, $0) }
    }

    /// The keys matching `query`, in the query's order (by key unless it says otherwise).
    public func keys(matching query: KeyValueQuery) throws -> [String] {
        var compiled = CompiledQuery(query, schema: schema, now: configuration.now())
        let tail = compiled.orderAndPage(query)
        let select = compiled.select("i.key")
        return try database.read { db in
            try db.fetchAll(sql: select.sql + tail.sql, arguments: select.arguments + tail.arguments)
                .map { try $0.decode(String.self, at: 0) }
        }
    }

    /// The number of unexpired items matching `query` (its limit and offset are ignored).
    public func count(matching query: KeyValueQuery) throws -> Int {
        let select = CompiledQuery(query, schema: schema, now: configuration.now()).select("count(*)")
        return try database.read { db in try db.fetchValue(Int.self, sql: select.sql, arguments: select.arguments) ?? 0 }
    }

    /// The sum of `field` over the items matching `query`; 0 when none has it.
    public func sum<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) throws -> Double {
        try aggregate(.sum, of: field.name, matching: query).flatMap(Double.fromDatabaseValue) ?? 0
    }

    /// The average of `field` over the items matching `query`; nil when none has it.
    public func average<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) throws -> Double? {
        try aggregate(.average, of: field.name, matching: query).flatMap(Double.fromDatabaseValue)
    }

    /// The smallest `field` among the items matching `query`; nil when none has it.
    public func minimum<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) throws -> Field? {
        try aggregate(.minimum, of: field.name, matching: query).flatMap(Field.fromDatabaseValue)
    }

    /// The largest `field` among the items matching `query`; nil when none has it.
    public func maximum<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) throws -> Field? {
        try aggregate(.maximum, of: field.name, matching: query).flatMap(Field.fromDatabaseValue)
    }

    /// The number of items matching `query` that have `field`.
    public func count<Root, Field>(of field: KeyValueIndexField<Root, Field>, matching query: KeyValueQuery) throws -> Int {
        try aggregate(.count, of: field.name, matching: query).flatMap(Int.fromDatabaseValue) ?? 0
    }

    // MARK: Shared pieces

    func itemsStatement(_ query: KeyValueQuery, now: Date) -> (sql: String, arguments: StatementArguments) {
        var compiled = CompiledQuery(query, schema: schema, now: now)
        let tail = compiled.orderAndPage(query)
        let select = compiled.select(StoredItem.columns(prefix: "i.", decompressing: schema.readsCompressed))
        return (select.sql + tail.sql, select.arguments + tail.arguments)
    }

    static func fetchItems(_ statement: (sql: String, arguments: StatementArguments), in db: Connection) throws -> [StoredItem] {
        var items: [StoredItem] = []
        try db.forEachRow(sql: statement.sql, arguments: statement.arguments) { items.append(StoredItem(statement: $0)) }
        return items
    }

    func aggregateStatement(_ function: KeyValueAggregate, of field: String, matching query: KeyValueQuery, now: Date)
        -> (sql: String, arguments: StatementArguments)
    {
        var compiled = CompiledQuery(query, schema: schema, now: now)
        let alias = compiled.alias(for: field)
        return compiled.select("\(function.rawValue)(\(alias).value)")
    }

    func aggregate(_ function: KeyValueAggregate, of field: String, matching query: KeyValueQuery) throws -> DatabaseValue? {
        let statement = aggregateStatement(function, of: field, matching: query, now: configuration.now())
        return try database.read { db in
            try db.fetchOne(sql: statement.sql, arguments: statement.arguments)?[0]
        }
    }
}
