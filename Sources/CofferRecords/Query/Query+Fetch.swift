// Running a query: records, counts, existence, and a lazy cursor.

import CofferEngine

extension Query {
    /// The SQL and arguments of `fetchAll`, for logs and tests.
    public func build() throws -> (sql: String, arguments: StatementArguments) { try selectFragment.render() }

    /// Every matching record.
    public func fetchAll(_ db: Connection) throws -> [Root] {
        let (sql, arguments) = try selectFragment.render()
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            try StatementDecoder.fetchAll(Root.self, from: statement)
        }
    }

    /// The first matching record, or nil.
    public func fetchOne(_ db: Connection) throws -> Root? {
        let (sql, arguments) = try limit(1, offset: offsetValue).selectFragment.render()
        return try db.withStatement(sql: sql, arguments: arguments) { statement in
            try StatementDecoder.fetchOne(Root.self, from: statement)
        }
    }

    /// The number of matching rows (of groups, for a grouped query).
    public func fetchCount(_ db: Connection) throws -> Int {
        let (sql, arguments) = try countFragment.render()
        return try db.fetchValue(Int.self, sql: sql, arguments: arguments) ?? 0
    }

    /// True when at least one row matches.
    public func exists(_ db: Connection) throws -> Bool {
        let (sql, arguments) = try existsFragment.render()
        return try db.fetchValue(Bool.self, sql: sql, arguments: arguments) ?? false
    }

    /// A cursor that decodes one record at a time: memory stays flat however many rows match.
    ///
    /// Use it inside the `read`/`write` closure that gave you `db`, and do not keep it afterwards.
    ///
    /// ```swift
    /// let cursor = try Message.order { $0.id.asc }.cursor(db)
    /// while let message = try cursor.next() { index(message) }
    /// ```
    public func cursor(_ db: Connection) throws -> RecordCursor<Root> {
        let (sql, arguments) = try selectFragment.render()
        return try RecordCursor(connection: db, sql: sql, arguments: arguments)
    }
}

extension TableRecord {
    /// Every row of the table.
    public static func fetchAll(_ db: Connection) throws -> [Self] { try all().fetchAll(db) }

    /// The number of rows in the table.
    public static func fetchCount(_ db: Connection) throws -> Int { try all().fetchCount(db) }

    /// The first row of the table, or nil when it is empty.
    public static func fetchOne(_ db: Connection) throws -> Self? { try all().fetchOne(db) }

    /// True when the table has at least one row.
    public static func exists(_ db: Connection) throws -> Bool { try all().exists(db) }

    /// A cursor over every row of the table (see ``Query/cursor(_:)``).
    public static func cursor(_ db: Connection) throws -> RecordCursor<Self> { try all().cursor(db) }
}
