// Connection+StatementCount — how many statements SQLite runs during a stretch of code, from its own
// trace hook (sqlite3_trace_v2, SQLITE_TRACE_STMT), so that a test can prove a fixed number of queries.

import CSQLCipher

extension Connection {
    /// Runs `body` and returns its result with the number of top-level statements SQLite started
    /// meanwhile (statements run by triggers are not counted). Other trace listeners keep running.
    func countingStatements<T>(_ body: () throws -> T) throws -> (result: T, statements: Int) {
        var statements = 0
        // A trigger's sub-statement arrives as a comment on the same statement: not counted.
        let listener = addTraceListener(mask: SQLITE_TRACE_STMT) { event in
            if !event.isTriggerStart { statements += 1 }
        }
        defer { removeTraceListener(listener) }
        let result = try body()
        return (result, statements)
    }

    /// The number of statements prepared on this connection and not yet finalized (the statement cache's
    /// and any open cursor's), from SQLite's own list (`sqlite3_next_stmt`).
    var preparedStatementCount: Int {
        var count = 0
        var statement = sqlite3_next_stmt(handle, nil)
        while let current = statement {
            count += 1
            statement = sqlite3_next_stmt(handle, current)
        }
        return count
    }
}
