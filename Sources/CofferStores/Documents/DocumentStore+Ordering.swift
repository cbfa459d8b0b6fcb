import CofferEngine
import CofferRecords
import Foundation

/// Ordering by attributes, done beside SQL rather than in it.
///
/// The attribute table is keyed by `(path, kind, value, doc_id, ordinal)`, so it cannot fetch "the
/// value at this path of document N" without scanning the path; a correlated subquery per document
/// would be quadratic. Instead each sort key is one scan of its path in `(kind, value)` order (the
/// table's own order, no sort step): the first time a selected document appears is its smallest value
/// ascending (its largest descending), and equal values share a rank. Documents are then sorted by
/// their ranks, missing attributes first ascending and last descending, ties by key bytes.
extension DocumentStore {
    /// The ids of the documents `query` selects, in its order, one page (`query.ordering` is not empty).
    func orderedPage(_ query: DocumentQuery, in db: Connection) throws -> [Int64] {
        var compiler = PredicateCompiler(schema: schema, store: name)
        let predicate = restricted(query)
        var sql = "SELECT id, key FROM \(schema.documents)"
        if predicate != .all { sql += " WHERE id IN (\(try compiler.idSet(predicate)))" }
        var keys: [Int64: String] = [:]
        try db.forEachRow(sql: sql, arguments: StatementArguments(compiler.arguments)) {
            keys[$0.int64(at: 0)] = $0.string(at: 1)
        }

        var ranks: [[Int64: Int]] = []
        for ordering in query.ordering {
            let direction = ordering.descending ? "DESC" : "ASC"
            let scan =
                "SELECT doc_id, kind, value FROM \(schema.attributes) WHERE \(schema.pathMatch) ORDER BY kind \(direction), value \(direction)"
            var rank: [Int64: Int] = [:]
            var group = 0
            var last: (kind: Int64, value: DatabaseValue)?
            try db.forEachRow(sql: scan, arguments: [ordering.path.description]) { row in
                let id = row.int64(at: 0)
                guard keys[id] != nil, rank[id] == nil else { return }
                let kind = row.int64(at: 1)
                let value = row.value(at: 2)
                if let previous = last, previous.kind == kind, Self.sortsEqual(previous.value, value) {
                } else {
                    group += 1
                    last = (kind, value)
                }
                rank[id] = group
            }
            ranks.append(rank)
        }

        let missing = query.ordering.map { $0.descending ? Int.max : 0 }
        let sorted = keys.sorted { left, right in
            for (index, rank) in ranks.enumerated() {
                let l = rank[left.key] ?? missing[index]
                let r = rank[right.key] ?? missing[index]
                if l != r { return l < r }
            }
            return left.value.utf8.lexicographicallyPrecedes(right.value.utf8)
        }
        let start = min(query.offset, sorted.count)
        let end = query.limit.map { min(sorted.count, start + max(0, $0)) } ?? sorted.count
        return sorted[start..<end].map(\.key)
    }

    /// True when SQLite sorts `left` and `right` as equal (an integer and a real of one value are).
    static func sortsEqual(_ left: DatabaseValue, _ right: DatabaseValue) -> Bool {
        switch (left, right) {
        case (.integer(let l), .real(let r)), (.real(let r), .integer(let l)): return Double(l) == r
        default: return left == right
        }
    }

    /// `columns` of the documents `ids`, in that order.
    func rows<Row>(_ ids: [Int64], columns: String, in db: Connection, _ read: (Statement) -> Row) throws -> [Row] {
        let sql = "SELECT \(columns) FROM \(schema.documents) AS d WHERE d.id = ?"
        var rows: [Row] = []
        for id in ids { try db.forEachRow(sql: sql, arguments: [id]) { rows.append(read($0)) } }
        return rows
    }
}
