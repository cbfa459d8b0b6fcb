// Database+OneStatement — a reader lent for one statement outside any transaction: the path of
// `PreparedQuery.fetchOne(_:_:)` and `fetchAll(_:_:)` called with a `Database` instead of a `Connection`.

extension Database {
    /// A reader for one statement run outside any transaction, or nil when this database's reads must
    /// take the transaction path (``read(_:)``): it has no reader pool (in memory, or
    /// ``Configuration/readerCount`` 0, where reads run on the writer's queue), or spans are on (each read
    /// is a span).
    ///
    /// SQLite runs every statement on one snapshot of its own, from its first step to its reset, so a
    /// read made of one statement needs no `BEGIN` and `COMMIT`, which are most of what ``read(_:)``
    /// costs besides the query. Give the reader back with ``checkInStatementReader(_:)``.
    @usableFromInline
    package func checkOutStatementReader() throws -> Connection? {
        guard let connection = try statementReaders?.checkOut() else { return nil }
        do { try connectionSetup.prepare(connection) } catch {
            statementReaders?.checkIn(connection)
            throw error
        }
        // No record-cache placement carries over from the reader's last transaction: this statement
        // has none.
        connection.snapshotStamp.placement = .none
        return connection
    }

    /// Returns a reader lent by ``checkOutStatementReader()``.
    @usableFromInline
    package func checkInStatementReader(_ connection: Connection) {
        statementReaders?.checkIn(connection)
    }
}
