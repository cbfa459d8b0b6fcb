import CofferEngine

/// Iterates over the records of a query one at a time, reading each straight from the statement.
///
/// The cursor holds its prepared statement until it is exhausted or released; it belongs to the
/// connection's queue like the connection itself.
public final class RecordCursor<Record: TableRecord> {
    private let statement: Statement
    private let decoder: StatementDecoder
    private var isDone = false

    init(connection: Connection, sql: String, arguments: StatementArguments) throws {
        let statement = try connection.cachedStatement(sql: sql)
        try statement.bind(arguments)
        statement.isInUse = true
        self.statement = statement
        self.decoder = StatementDecoder.forRecord(Record.self, on: statement)
    }

    deinit { finish() }

    /// The next record, or nil after the last one.
    public func next() throws -> Record? {
        guard !isDone else { return nil }
        do {
            guard try statement.step() else {
                finish()
                return nil
            }
            return try decoder.record(Record.self)
        } catch {
            finish()
            throw error
        }
    }

    /// Calls `body` with each remaining record.
    public func forEach(_ body: (Record) throws -> Void) throws {
        while let record = try next() { try body(record) }
    }

    private func finish() {
        guard !isDone else { return }
        isDone = true
        statement.reset()
        statement.isInUse = false
    }
}
