import CofferEngine

extension Connection {
    /// Executes an ``SQL`` literal: interpolated values are bound, never spliced.
    ///
    /// ```swift
    /// try db.execute(SQL("UPDATE player SET score = score + \(points) WHERE id = \(id)"))
    /// ```
    public func execute(_ sql: SQL) throws {
        let (text, arguments) = try sql.build()
        try execute(sql: text, arguments: arguments)
    }

    /// The rows of an ``SQL`` literal query.
    public func fetchAll(_ sql: SQL) throws -> [Row] {
        let (text, arguments) = try sql.build()
        return try fetchAll(sql: text, arguments: arguments)
    }

    /// The first value of an ``SQL`` literal query, or nil.
    public func fetchValue<Value: DatabaseValueConvertible>(_ type: Value.Type = Value.self, _ sql: SQL) throws -> Value? {
        let (text, arguments) = try sql.build()
        return try fetchValue(type, sql: text, arguments: arguments)
    }

    /// Records decoded from an ``SQL`` literal query; it must select the record's columns by name.
    ///
    /// ```swift
    /// let players = try db.fetchAll(Player.self, SQL("SELECT * FROM player WHERE name LIKE \(pattern)"))
    /// ```
    public func fetchAll<Record: TableRecord>(_ type: Record.Type, _ sql: SQL) throws -> [Record] {
        let (text, arguments) = try sql.build()
        return try withStatement(sql: text, arguments: arguments) { statement in
            let decoder = StatementDecoder(statement: statement, names: statement.columnNames)
            var records: [Record] = []
            while try statement.step() { records.append(try decoder.decode(Record.self)) }
            return records
        }
    }
}
