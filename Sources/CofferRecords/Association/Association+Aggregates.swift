// Origins filtered, sorted and annotated by their associated records: correlated subqueries over the
// association (`EXISTS (…)`, `(SELECT count(*) …)`), usable wherever an expression of the origin is.

import CofferEngine

extension Association {
    /// True for an origin with at least one associated record the association's filters keep:
    /// `EXISTS (SELECT 1 FROM destination WHERE key = origin's key AND filters)`.
    ///
    /// ```swift
    /// let recent = try Author.filter { _ in Author.books.filter { $0.year >= 2000 }.exists }.fetchAll(db)
    /// ```
    public var exists: SQLExpression<Origin, Bool> {
        SQLExpression(SQLFragment(raw: "EXISTS ") + link.correlatedSubquery(selecting: SQLFragment(raw: "1")))
    }
}

extension Association where Cardinality == ToMany {
    /// The number of an origin's associated records the association's filters keep, to filter, sort or
    /// annotate origins by.
    ///
    /// ```swift
    /// let prolific = try Author.filter { _ in Author.books.count >= 3 }.order { _ in [Author.books.count.desc] }
    ///     .annotated(with: Author.books.count).fetchAll(db)       // [(Author, Int)]
    /// ```
    public var count: SQLExpression<Origin, Int> {
        SQLExpression(link.correlatedSubquery(selecting: SQLFragment(raw: "count(*)")))
    }

    /// The largest value of `column` among an origin's associated records (nil when it has none).
    public func max<Value>(_ column: (Destination.Columns) -> TableColumn<Destination, Value>) -> SQLExpression<
        Origin, Value?
    > {
        SQLExpression(
            link.correlatedSubquery(
                selecting: SQLFragment(raw: "max(") + column(Destination.columns).sqlFragment + SQLFragment(raw: ")")))
    }
}

extension AssociationLink {
    /// `(SELECT <selection> FROM destination WHERE "destination"."key" = "origin"."key" AND filters)`,
    /// its correlation qualified whatever the enclosing query renders.
    func correlatedSubquery(selecting selection: SQLFragment) -> SQLFragment {
        func qualified(_ table: String, _ column: String) -> SQLFragment {
            SQLFragment([.identifier(table)]) + SQLFragment(raw: ".") + SQLFragment([.identifier(column)])
        }
        let match =
            qualified(Destination.tableName, destinationColumn) + SQLFragment(raw: " = ")
            + qualified(Origin.tableName, originColumn)
        return
            (SQLFragment(raw: "SELECT ") + selection + SQLFragment(raw: " FROM ") + Query<Destination>.table
            + SQLFragment(raw: " WHERE ") + Query<Destination>.conjunction([match] + destinationQuery.filters)).parenthesized
    }
}

/// Records fetched with one more value each, such as an association's ``Association/count``: made by
/// ``Query/annotated(with:)``.
public struct AnnotatedQuery<Root: TableRecord, Value: Decodable>: Sendable {
    var query: Query<Root>
    var annotation: SQLExpression<Root, Value>

    /// Keeps the records whose annotation satisfies `predicate`, as in SQL's `HAVING`:
    /// `Author.annotated(with: Author.books.count).having { $0 >= 3 }`.
    public func having(_ predicate: (SQLExpression<Root, Value>) -> SQLExpression<Root, Bool>) -> Self {
        var annotated = self
        annotated.query.filters.append(predicate(annotation).sqlFragment)
        return annotated
    }

    /// Every record the query matches, in its order, with its annotation.
    public func fetchAll(_ db: Connection) throws -> [(Root, Value)] {
        let select =
            SQLFragment(raw: "SELECT ") + Query<Root>.recordSelection + SQLFragment(raw: ", ")
            + annotation.sqlFragment.parenthesized + query.tail(from: Query<Root>.table)
        let (sql, arguments) = try select.render()
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            let decoder = StatementDecoder.forRecord(Root.self, on: statement)
            let column = Int32(Root.columnDefinitions.count)
            var rows: [(Root, Value)] = []
            // A reader per row: it reads the value the row holds once the statement is on it.
            while try statement.step() {
                let value = try ColumnReader(statement: statement, column: column).decode(Value.self)
                rows.append((try decoder.record(Root.self), value))
            }
            return rows
        }
    }
}

extension Query {
    /// The matching records, each with the value of `annotation` (an association's aggregate, or any
    /// expression of the record).
    public func annotated<Value: Decodable>(with annotation: SQLExpression<Root, Value>) -> AnnotatedQuery<Root, Value> {
        AnnotatedQuery(query: self, annotation: annotation)
    }
}

extension TableRecord {
    /// Every record with the value of `annotation` (see ``Query/annotated(with:)``).
    public static func annotated<Value: Decodable>(with annotation: SQLExpression<Self, Value>) -> AnnotatedQuery<Self, Value> {
        Query().annotated(with: annotation)
    }
}
