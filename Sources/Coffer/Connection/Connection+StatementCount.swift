// Connection+StatementCount — how many statements SQLite runs during a stretch of code, from its own
// trace hook (sqlite3_trace_v2, SQLITE_TRACE_STMT), so that a test can prove a fixed number of queries.

import CSQLCipher

extension Connection {
    /// Runs `body` and returns its result with the number of top-level statements SQLite started
    /// meanwhile (statements run by triggers are not counted). Replaces any trace hook for the duration.
    func countingStatements<T>(_ body: () throws -> T) throws -> (result: T, statements: Int) {
        let counter = StatementCounter()
        sqlite3_trace_v2(
            handle, UInt32(SQLITE_TRACE_STMT),
            { _, context, _, text in
                // A trigger's sub-statement arrives as its SQL text prefixed with "--".
                let sql = text.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? ""
                if let context, !sql.hasPrefix("--") {
                    Unmanaged<StatementCounter>.fromOpaque(context).takeUnretainedValue().statements += 1
                }
                return 0
            }, Unmanaged.passUnretained(counter).toOpaque())
        defer { sqlite3_trace_v2(handle, 0, nil, nil) }
        let result = try withExtendedLifetime(counter) { try body() }
        return (result, counter.statements)
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

/// The count ``Connection/countingStatements(_:)`` keeps, reached from SQLite's trace callback.
private final class StatementCounter {
    var statements = 0
}
