import CofferEngine
import CofferRecords

extension FullTextPattern {
    /// `column IN (SELECT <docid> FROM table WHERE table MATCH ?)`, with `AND column NOT IN (…)` for the
    /// pattern's exclusions, and the MATCH texts to bind in order: how a store whose rows are found by
    /// their FTS docids (the key-value and document stores) keeps the rows a pattern finds. `docid` is
    /// the expression turning an FTS row's docid into `column`'s value; `table` is quoted already.
    /// Throws as ``matchExpression()``.
    package func membership(
        of column: String, in table: String, docid: String = "docid"
    ) throws -> (sql: String, arguments: [DatabaseValue]) {
        let docids = "(SELECT \(docid) FROM \(table) WHERE \(table) MATCH ?)"
        var sql = "\(column) IN \(docids)"
        var arguments: [DatabaseValue] = [.text(try matchExpression())]
        if let excluded = excludedMatchExpression() {
            sql += " AND \(column) NOT IN \(docids)"
            arguments.append(.text(excluded))
        }
        return (sql, arguments)
    }
}
