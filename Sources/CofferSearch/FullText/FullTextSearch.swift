import CSQLCipher
import CofferEngine
import CofferRecords

/// A ranked full-text search: the rows the index finds for a pattern, best first by BM25, each with
/// the ranges of its text that matched.
///
/// ```swift
/// let results = try ChatMessage.search(.searchBox("新年 party"))
///     .filter { $0.conversationID == 7 }
///     .limit(20)
///     .fetchAll(db)
/// for result in results {
///     print(result.rank, result.snippet()?.marked(open: "[", close: "]") ?? "")
/// }
/// ```
///
/// The rank is `coffer_bm25(matchinfo(<index>, 'pcnalx'), weights…)`, a function Coffer registers on
/// every connection (k1 = 1.2, b = 0.75); hand-written SQL can use it the same way. On an FTS5 index it is
/// `-bm25(<index>, weights…)`, FTS5's own BM25 with the same constants, and the highlights come from
/// `coffer_offsets(<index>)`, which Coffer registers with FTS5 to give what FTS4's `offsets()` gives.
public struct FullTextSearch<Root: FullTextSearchable>: Sendable {
    let pattern: FullTextPattern
    var query: Query<Root>
    var weights: [Double] = []
    var isRanked = true

    /// Keeps results where `predicate` is true (any filter of the query builder).
    public func filter<E: TypedExpression>(_ predicate: (Root.Columns) -> E) -> FullTextSearch
    where E.Root == Root, E.Value == Bool {
        var search = self
        search.query = query.filter(predicate)
        return search
    }

    /// Returns at most `limit` results, skipping the first `offset`.
    public func limit(_ limit: Int, offset: Int? = nil) -> FullTextSearch {
        var search = self
        search.query = query.limit(limit, offset: offset)
        return search
    }

    /// Returns results in the index's order (ascending rowid) instead of best first: SQLite stops reading
    /// the index at the limit instead of ranking every match, so a page of a common word's results comes
    /// at once. Each result still has its rank and highlights.
    public func unranked() -> FullTextSearch {
        var search = self
        search.isRanked = false
        return search
    }

    /// Weighs each indexed column's hits, in the index's column order (1 for a column not given).
    public func weights(_ weights: [Double]) -> FullTextSearch {
        var search = self
        search.weights = weights
        return search
    }

    /// The SQL and arguments of ``fetchAll(_:)``.
    public func build() throws -> (sql: String, arguments: StatementArguments) {
        try fragment.render(SQLFragment.RenderOptions(qualifyColumns: true))
    }

    private var fragment: SQLFragment {
        let index = Root.fullTextIndex
        let content = Root.tableName
        let columns = Root.columnDefinitions.map { $0.selection(table: content) }
        // The indexed texts are read where the record's own columns are; one not among them is selected again.
        let extraTexts = Self.extraTextColumns.map { SQLFragment([.column(table: content, name: $0)]) }
        let fts = SQLFragment([.identifier(index.name)])
        let fts5 = index.engine == .fts5
        // FTS5's own bm25() is lower for better matches: its negation ranks as coffer_bm25 does.
        var rank = SQLFragment(raw: fts5 ? "-bm25(" : "coffer_bm25(matchinfo(") + fts
        rank += SQLFragment(raw: fts5 ? "" : ", 'pcnalx')")
        for weight in weights { rank += SQLFragment(raw: ", ") + SQLFragment(value: .real(weight)) }
        rank += SQLFragment(raw: ")")
        var sql = SQLFragment(raw: "SELECT ") + SQLFragment.join(columns, separator: ", ") + SQLFragment(raw: ", ")
        sql += rank + SQLFragment(raw: fts5 ? " AS coffer_rank, coffer_offsets(" : " AS coffer_rank, offsets(") + fts
        sql += SQLFragment(raw: ")")
        for text in extraTexts { sql += SQLFragment(raw: ", ") + text }
        // `main."T"`, never a live migration's union view `T`: the index's hits are the table's own rows,
        // joined on rowid, and a view has no rowids of its rows (see Query's `source`).
        sql += SQLFragment(raw: " FROM ") + fts + SQLFragment(raw: " JOIN main.") + SQLFragment([.identifier(content)])
        sql += SQLFragment(raw: " ON ") + SQLFragment([.column(table: content, name: "rowid")]) + SQLFragment(raw: " = ")
        sql += fts + SQLFragment(raw: "." + index.engine.rowidColumn + " WHERE ") + fts + SQLFragment(raw: " MATCH ")
        do {
            sql += SQLFragment(value: .text(try pattern.matchExpression(for: index.engine)))
        } catch {
            return SQLFragment([.invalid(error as? CofferError ?? CofferError(code: .apiMisuse, message: "\(error)"))])
        }
        var filters = query.wholeRowFilters
        if let excluded = pattern.excludedMatchExpression(for: index.engine) {
            filters.append(Query<Root>.rowid(in: index.docids(excluded), negated: true))
        }
        for filter in filters { sql += SQLFragment(raw: " AND ") + filter.parenthesized }
        if isRanked { sql += SQLFragment(raw: " ORDER BY coffer_rank DESC") }
        if let limit = query.limitValue {
            sql += SQLFragment(raw: " LIMIT ") + SQLFragment(value: .integer(Int64(limit)))
            if let offset = query.offsetValue {
                sql += SQLFragment(raw: " OFFSET ") + SQLFragment(value: .integer(Int64(offset)))
            }
        }
        return sql
    }

    /// The results, best first.
    public func fetchAll(_ db: Connection) throws -> [FullTextResult<Root>] {
        if pattern.matchesNothing { return [] }
        let (sql, arguments) = try build()
        let trimmed = pattern.trailingCJKTerms
        let recordColumns = Root.columnDefinitions.count
        let textColumns = Root.fullTextIndex.columnNames
        let textPositions = Self.textPositions
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            let decoder = StatementDecoder.forRecord(Root.self, on: statement)
            var results: [FullTextResult<Root>] = []
            while try statement.step() {
                let record = try decoder.record(Root.self)
                let rank = statement.double(at: recordColumns)
                let offsets = statement.string(at: recordColumns + 1)
                let texts = textPositions.map { statement.string(at: $0) }
                let highlights = FullTextHighlight.from(
                    offsets: offsets, columns: textColumns, texts: texts, trimmedTerms: trimmed)
                results.append(FullTextResult(record: record, rank: rank, highlights: highlights))
            }
            return results
        }
    }

    /// The indexed columns that are not among the record's columns (selected after the rank and offsets).
    private static var extraTextColumns: [String] {
        let names = Set(Root.columnDefinitions.map(\.name))
        return Root.fullTextIndex.columnNames.filter { !names.contains($0) }
    }

    /// Where each indexed column's text is in a result row: its record column, or its place after the
    /// rank and offsets.
    private static var textPositions: [Int] {
        let names = Root.columnDefinitions.map(\.name)
        var extra = names.count + 2
        return Root.fullTextIndex.columnNames.map { name in
            if let position = names.firstIndex(of: name) { return position }
            defer { extra += 1 }
            return extra
        }
    }
}

extension FullTextSearchable {
    /// A ranked search of the index for `pattern` (see ``FullTextSearch``).
    public static func search(_ pattern: FullTextPattern) -> FullTextSearch<Self> {
        FullTextSearch(pattern: pattern, query: Query())
    }
}

extension Query where Root: FullTextSearchable {
    /// A ranked search for `pattern` among this query's rows (its filters and limit; its order is
    /// replaced by the rank).
    public func search(_ pattern: FullTextPattern) -> FullTextSearch<Root> {
        FullTextSearch(pattern: pattern, query: self)
    }
}

/// One result of a ``FullTextSearch``: the record, its BM25 rank (higher is better) and where its
/// indexed text matched.
public struct FullTextResult<Record> {
    /// The matching row.
    public let record: Record
    /// Its BM25 relevance: higher is better; only comparable within one search.
    public let rank: Double
    /// The matched ranges, one entry per indexed column with a hit, in column order.
    public let highlights: [FullTextHighlight]

    /// A window of at most `maximumCharacters` characters of the column with the most hits, around its
    /// first hit; nil when no column has a hit (a match on excluded terms only cannot happen).
    public func snippet(maximumCharacters: Int = 64) -> FullTextSnippet? {
        highlights.max { $0.ranges.count < $1.ranges.count }?.snippet(maximumCharacters: maximumCharacters)
    }
}

extension FullTextResult: Sendable where Record: Sendable {}
