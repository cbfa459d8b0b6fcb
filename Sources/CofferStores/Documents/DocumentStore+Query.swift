import CofferEngine
import CofferRecords
import Foundation

extension DocumentStore {
    /// The documents `query` selects, with their keys.
    ///
    /// ```swift
    /// let bostonians = try people.documents(matching: DocumentQuery(DocumentField("address.city") == "Boston"))
    /// ```
    public func documents(matching query: DocumentQuery) throws -> [DocumentMatch] {
        let rows = try fetch(query, columns: "d.key, \(schema.body("d.body"))") { ($0.string(at: 0), $0.data(at: 1)) }
        return try rows.map { DocumentMatch(key: $0.0, value: try decode($0.1, key: $0.0)) }
    }

    /// The keys of the documents `query` selects.
    public func keys(matching query: DocumentQuery) throws -> [String] {
        try fetch(query, columns: "d.key") { $0.string(at: 0) }
    }

    /// `columns` of the documents `query` selects, in its order, one page.
    private func fetch<Row>(_ query: DocumentQuery, columns: String, _ read: @escaping (Statement) -> Row) throws -> [Row] {
        if !query.ordering.isEmpty {
            return try database.read { db in try rows(try orderedPage(query, in: db), columns: columns, in: db, read) }
        }
        let select = try compile(query, columns: columns)
        return try database.read { db in
            var rows: [Row] = []
            try db.forEachRow(sql: select.sql, arguments: select.arguments) { rows.append(read($0)) }
            return rows
        }
    }

    /// The documents `query` selects, decoded as `Value`.
    public func values<Value: Decodable>(_ type: Value.Type, matching query: DocumentQuery) throws -> [Value] {
        try documents(matching: query).map { try DocumentCoding.decode(Value.self, from: $0.value, store: name, key: $0.key) }
    }

    /// Chosen attributes of the documents `query` selects: per document its key and the value at each of
    /// `paths` (a path it lacks is absent from the dictionary).
    public func attributes(
        _ paths: [DocumentPath], matching query: DocumentQuery
    ) throws -> [(key: String, values: [DocumentPath: DocumentValue])] {
        try documents(matching: query).map { match in
            var values: [DocumentPath: DocumentValue] = [:]
            for path in paths { values[path] = match.value[path] }
            return (match.key, values)
        }
    }

    /// The number of documents `query` selects (its limit and offset apply; its order does not matter).
    public func count(matching query: DocumentQuery) throws -> Int {
        let select = try compile(query, columns: "1", ordered: false)
        let sql = "SELECT count(*) FROM (\(select.sql))"
        return try database.read { db in try db.fetchValue(Int.self, sql: sql, arguments: select.arguments) ?? 0 }
    }

    /// `function` over the numbers at `path` in the documents `query` selects (its order and paging
    /// do not apply); nil when there is no number to take an average, minimum or maximum of.
    ///
    /// ```swift
    /// let averageAge = try people.aggregate(.average, of: "age", matching: DocumentQuery(inBag: "staff"))
    /// ```
    public func aggregate(
        _ function: DocumentAggregate, of path: DocumentPath, matching query: DocumentQuery = DocumentQuery()
    ) throws -> Double? {
        var compiler = PredicateCompiler(schema: schema, store: name)
        let predicate = restricted(query)
        // Through the documents table, so attribute rows a raw SQL delete left behind never count.
        let ids =
            predicate == .all
            ? "SELECT id FROM \(schema.documents)"
            : "SELECT id FROM \(schema.documents) WHERE id IN (\(try compiler.idSet(predicate)))"
        let sql = """
            SELECT \(function.rawValue)(value) FROM \(schema.attributes)
            WHERE \(schema.pathMatch) AND kind = ? AND doc_id IN (\(ids))
            """
        let arguments = StatementArguments(
            [.text(path.description), .integer(AttributeKind.number.rawValue)] + compiler.arguments)
        return try database.read { db in try db.fetchValue(Double.self, sql: sql, arguments: arguments) }
    }

    /// Deletes the documents `query` selects (from every bag too) in one transaction; returns how many.
    /// With an order and a limit, the first page of that order goes.
    @discardableResult
    public func delete(matching query: DocumentQuery) throws -> Int {
        let select = try compile(query, columns: "d.id, \(schema.body("d.body"))", ordered: false)
        return try database.write { db in
            var doomed: [(Int64, Data)] = []
            if query.ordering.isEmpty || (query.limit == nil && query.offset == 0) {
                try db.forEachRow(sql: select.sql, arguments: select.arguments) {
                    doomed.append(($0.int64(at: 0), $0.data(at: 1)))
                }
            } else {
                doomed = try rows(try orderedPage(query, in: db), columns: "d.id, \(schema.body("d.body"))", in: db) {
                    ($0.int64(at: 0), $0.data(at: 1))
                }
            }
            let paths = AttributePaths(schema: schema)
            for (id, body) in doomed { try deleteDocument(id: id, body: body, in: db, paths: paths) }
            return doomed.count
        }
    }

    /// The query's predicate, within its bag when it names one.
    func restricted(_ query: DocumentQuery) -> DocumentPredicate {
        guard let bag = query.bag else { return query.predicate }
        return .and([.inBag(bag), query.predicate])
    }

    /// `SELECT columns FROM docs AS d WHERE d.id IN (…) ORDER BY d.key LIMIT … OFFSET …`: a query
    /// without attribute ordering (see ``orderedPage(_:in:)`` for those). Results come in key order;
    /// `ordered: false` drops that (counts, deletes) unless the query pages.
    func compile(
        _ query: DocumentQuery, columns: String, ordered: Bool = true
    ) throws -> (sql: String, arguments: StatementArguments) {
        var compiler = PredicateCompiler(schema: schema, store: name)
        let predicate = restricted(query)
        var sql = "SELECT \(columns) FROM \(schema.documents) AS d"
        if predicate != .all { sql += " WHERE d.id IN (\(try compiler.idSet(predicate)))" }
        var arguments = compiler.arguments
        if ordered || query.limit != nil || query.offset > 0 { sql += " ORDER BY d.key" }
        if query.limit != nil || query.offset > 0 {
            sql += " LIMIT ? OFFSET ?"
            arguments += [.integer(Int64(query.limit ?? -1)), .integer(Int64(query.offset))]
        }
        return (sql, StatementArguments(arguments))
    }
}
