// PreparedQuery+Database — a prepared query run as a read of its own: one statement on a reader,
// outside any transaction.

import CofferEngine

extension PreparedQuery {
    /// The first matching record, or nil, read by one statement on a reader connection: a read of its
    /// own, with no `read` closure around it.
    ///
    /// SQLite runs one statement on one snapshot, so the record is consistent on its own; what this
    /// saves against `database.read { db in try byID.fetchOne(db, id) }` is the closure's `BEGIN` and
    /// `COMMIT`, about 15% of a plaintext primary-key lookup's instructions. Use ``Database/read(_:)`` when several
    /// statements must see the same snapshot.
    ///
    /// ```swift
    /// let byID = try Person.filter { $0.id == .parameter }.prepared()
    /// let person = try byID.fetchOne(database, 42)
    /// ```
    ///
    /// In memory, with ``Configuration/readerCount`` 0, or with ``Monitoring/spans`` on, it runs as
    /// ``Database/read(_:)`` does. It runs on the calling thread and waits for a reader when all are busy,
    /// as the synchronous `read` does; async code that must never block its thread uses
    /// `try await database.read { db in try byID.fetchOne(db, id) }`.
    public func fetchOne<First: DatabaseValueConvertible, each Rest: DatabaseValueConvertible>(
        _ database: Database, _ first: First, _ rest: repeat each Rest
    ) throws -> Root? {
        guard let db = try database.checkOutStatementReader() else {
            return try database.read { db in try fetchOne(db, first, repeat each rest) }
        }
        defer { database.checkInStatementReader(db) }
        return try fetchOne(db, first, repeat each rest)
    }

    /// Every matching record, read by one statement on a reader connection outside any transaction
    /// (see `fetchOne(database, …)`).
    ///
    /// ```swift
    /// let recent = try Message.filter { $0.conversationID == .parameter }.order { $0.id.desc }.limit(50).prepared()
    /// let page = try recent.fetchAll(database, conversation)
    /// ```
    public func fetchAll<First: DatabaseValueConvertible, each Rest: DatabaseValueConvertible>(
        _ database: Database, _ first: First, _ rest: repeat each Rest
    ) throws -> [Root] {
        guard let db = try database.checkOutStatementReader() else {
            return try database.read { db in try fetchAll(db, first, repeat each rest) }
        }
        defer { database.checkInStatementReader(db) }
        return try fetchAll(db, first, repeat each rest)
    }

    /// The first matching record, or nil, with `value` bound to the query's one parameter, read by one
    /// statement on a reader connection outside any transaction: the one-argument form of
    /// `fetchOne(_:_:_:)`, without a parameter pack. Inlinable, as the connection's form is, so that both
    /// are specialized for the caller's record and argument types.
    @inlinable
    public func fetchOne<Value: DatabaseValueConvertible>(_ database: Database, _ value: Value) throws -> Root? {
        guard let db = try database.checkOutStatementReader() else {
            return try database.read { db in try fetchOne(db, value) }
        }
        defer { database.checkInStatementReader(db) }
        return try fetchOne(db, value)
    }

    /// Every matching record, with `value` bound to the query's one parameter, read by one statement on a
    /// reader connection outside any transaction: the one-argument form of `fetchAll(_:_:_:)`.
    public func fetchAll<Value: DatabaseValueConvertible>(_ database: Database, _ value: Value) throws -> [Root] {
        guard let db = try database.checkOutStatementReader() else {
            return try database.read { db in try fetchAll(db, value) }
        }
        defer { database.checkInStatementReader(db) }
        return try fetchAll(db, value)
    }

    /// The first matching record, or nil, with `arguments` bound to the parameters in order, read by one
    /// statement on a reader connection outside any transaction.
    public func fetchOne(_ database: Database, arguments: StatementArguments = []) throws -> Root? {
        guard let db = try database.checkOutStatementReader() else {
            return try database.read { db in try fetchOne(db, arguments: arguments) }
        }
        defer { database.checkInStatementReader(db) }
        return try fetchOne(db, arguments: arguments)
    }

    /// Every matching record, with `arguments` bound to the parameters in order, read by one statement on
    /// a reader connection outside any transaction.
    public func fetchAll(_ database: Database, arguments: StatementArguments = []) throws -> [Root] {
        guard let db = try database.checkOutStatementReader() else {
            return try database.read { db in try fetchAll(db, arguments: arguments) }
        }
        defer { database.checkInStatementReader(db) }
        return try fetchAll(db, arguments: arguments)
    }
}
