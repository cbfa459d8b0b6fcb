import CofferEngine
import Foundation

/// A record query rendered to SQL once, run many times with new arguments.
///
/// Building a ``Query`` and rendering it costs a few microseconds — as much as SQLite's own primary-key
/// lookup. When one query shape runs in a loop or on a hot path, prepare it once, with
/// ``QueryParameter/parameter`` where values change, and pass the values when it runs:
///
/// ```swift
/// extension Person {
///     // Once: renders the SQL, runs nothing.
///     static let byID = Result { try Person.filter { $0.id == .parameter }.prepared() }
/// }
///
/// try database.read { db in
///     let byID = try Person.byID.get()
///     for id in ids {
///         let person = try byID.fetchOne(db, id)   // bind, step, decode
///     }
/// }
/// ```
///
/// A prepared query is a value, safe to share between threads and usable with any connection of any
/// database: each connection compiles it on first use and keeps the compiled statement, so later
/// executions only bind the arguments into it, step and decode. There is no handle to misuse after a
/// `read` or `write` closure returns. Every value is bound, never written into the SQL; the query's
/// constant values are bound again at each execution, beside the arguments.
///
/// Queries rendering to the same SQL share one compiled statement per connection, so the statements a
/// connection keeps are bounded by the query shapes the program contains, not by how often
/// `prepared()` is called.
public struct PreparedQuery<Root: TableRecord>: Sendable {
    /// The SQL, with a `?` for every value (constants and parameters alike).
    public let sql: String
    /// Every `?`'s value: the query's constants, and a NULL stand-in at each parameter.
    private let template: [DatabaseValue]
    /// The positions in `template` (0-based) that take the arguments, in order.
    @usableFromInline let parameterPositions: [Int]
    /// The shape's identifier: equal for equal SQL, the key of each connection's compiled statement.
    let shapeID: Int

    init(query: Query<Root>) throws {
        let (sql, values, positions) = try query.selectFragment.renderTemplate()
        self.sql = sql
        self.template = values
        self.parameterPositions = positions
        self.shapeID = PreparedQueryShapes.shared.identifier(for: sql)
    }

    /// The number of arguments each execution takes: the query's ``QueryParameter``s.
    public var parameterCount: Int { parameterPositions.count }

    /// Every matching record, with `arguments` bound to the parameters in order.
    ///
    /// Throws ``CofferError`` with code `range` when the number of arguments differs from
    /// ``parameterCount``, and `apiMisuse` when `db` is closed.
    public func fetchAll(_ db: Connection, arguments: StatementArguments = []) throws -> [Root] {
        let statement = try begin(db)
        defer { end(statement) }
        try bind(statement, arguments)
        return try StatementDecoder.fetchAll(Root.self, from: statement)
    }

    /// The first matching record, or nil, with `arguments` bound to the parameters in order.
    ///
    /// It steps once: add `.limit(1)` to the query when it sorts many rows and you want only the first.
    public func fetchOne(_ db: Connection, arguments: StatementArguments = []) throws -> Root? {
        let statement = try begin(db)
        defer { end(statement) }
        try bind(statement, arguments)
        return try StatementDecoder.fetchOne(Root.self, from: statement)
    }

    /// Every matching record, with the arguments bound to the parameters in order — typed values, no
    /// array built per call: `try byAge.fetchAll(db, 18, 65)`.
    ///
    /// Throws ``CofferError`` with code `range` when the number of arguments differs from
    /// ``parameterCount``, and `apiMisuse` when `db` is closed.
    public func fetchAll<First: DatabaseValueConvertible, each Rest: DatabaseValueConvertible>(
        _ db: Connection, _ first: First, _ rest: repeat each Rest
    ) throws -> [Root] {
        let statement = try begin(db)
        defer { end(statement) }
        try bind(statement, first, repeat each rest)
        return try StatementDecoder.fetchAll(Root.self, from: statement)
    }

    /// The first matching record, or nil, with the arguments bound to the parameters in order — typed
    /// values, no array built per call: `try byID.fetchOne(db, 42)`.
    ///
    /// ```swift
    /// let byID = try Person.filter { $0.id == .parameter }.prepared()
    /// let person = try byID.fetchOne(db, 42)
    /// ```
    public func fetchOne<First: DatabaseValueConvertible, each Rest: DatabaseValueConvertible>(
        _ db: Connection, _ first: First, _ rest: repeat each Rest
    ) throws -> Root? {
        let statement = try begin(db)
        defer { end(statement) }
        try bind(statement, first, repeat each rest)
        return try StatementDecoder.fetchOne(Root.self, from: statement)
    }

    /// The first matching record, or nil, with `value` bound to the query's one parameter:
    /// `try byID.fetchOne(db, 42)`. The one-argument form of `fetchOne(_:_:_:)`, without a parameter pack
    /// (whose type metadata an unspecialized call builds at every execution).
    ///
    /// Inlinable, so that it is specialized in the caller's module for its record and argument types: the
    /// bind, the step and the record's reader run as direct calls, without the generic call's metadata,
    /// witness-table calls and indirect result (about 150 instructions of a 8,500-instruction lookup).
    /// The bind and the decode are written out here rather than calling `bind(_:_:)` and
    /// `StatementDecoder.fetchOne` made inlinable: measured that way (callgrind, W4), the larger function
    /// was no longer inlined into the caller and a lookup cost 8,535 instructions instead of 8,412.
    @inlinable
    public func fetchOne<Value: DatabaseValueConvertible>(_ db: Connection, _ value: Value) throws -> Root? {
        let statement = try begin(db)
        defer { end(statement) }
        guard parameterPositions.count == 1 else { throw argumentCountError(1) }
        try value.bind(to: statement, at: parameterPositions[0] + 1)
        guard try statement.step() else { return nil }
        return try Root(statementRow: StatementRow(decoder: StatementDecoder.forRecord(Root.self, on: statement)))
    }

    /// Every matching record, with `value` bound to the query's one parameter: the one-argument form of
    /// `fetchAll(_:_:_:)`, without a parameter pack.
    public func fetchAll<Value: DatabaseValueConvertible>(_ db: Connection, _ value: Value) throws -> [Root] {
        let statement = try begin(db)
        defer { end(statement) }
        try bind(statement, value)
        return try StatementDecoder.fetchAll(Root.self, from: statement)
    }

    /// Appends each matching record to `records` and calls `body` with its index there and the statement
    /// on its row, with `arguments` bound to the parameters in order (eager loads read each row's key from
    /// the statement). The records are collected here, not in `body`: in a client module this code is
    /// unspecialized, and a closure that appended a record would look up its array's metadata at every row
    /// (see ``StatementDecoder/records(_:from:_:)``).
    func appendRecords(
        _ db: Connection, arguments: [DatabaseValue], to records: RecordBuffer<Root>, _ body: (Int, Statement) throws -> Void
    ) throws {
        let statement = try begin(db)
        defer { end(statement) }
        try checkArgumentCount(arguments.count)
        for (index, value) in arguments.enumerated() {
            try statement.bind(value, toParameter: parameterPositions[index] + 1)
        }
        try StatementDecoder.append(Root.self, from: statement, to: records) { try body($0, statement) }
    }

    // Execution runs straight through (no closures): in a client module these generic methods run
    // unspecialized, and a closure capturing `self` costs a metadata lookup for `PreparedQuery<Root>`
    // (and one for `Root?`) per call, about 5% of a cached primary-key lookup.

    /// Binds a parameter pack, after checking its length.
    private func bind<First: DatabaseValueConvertible, each Rest: DatabaseValueConvertible>(
        _ statement: Statement, _ first: First, _ rest: repeat each Rest
    ) throws {
        var count = 1
        for _ in repeat each rest { count += 1 }
        try checkArgumentCount(count)
        try first.bind(to: statement, at: parameterPositions[0] + 1)
        var index = 1
        for value in repeat each rest {
            try value.bind(to: statement, at: parameterPositions[index] + 1)
            index += 1
        }
    }

    /// Binds the one argument, after checking that the query takes one.
    @inline(__always)
    private func bind<Value: DatabaseValueConvertible>(_ statement: Statement, _ value: Value) throws {
        try checkArgumentCount(1)
        try value.bind(to: statement, at: parameterPositions[0] + 1)
    }

    /// Binds `arguments`, after checking their number.
    private func bind(_ statement: Statement, _ arguments: StatementArguments) throws {
        try checkArgumentCount(arguments.values.count)
        for (index, value) in arguments.values.enumerated() {
            try statement.bind(value, toParameter: parameterPositions[index] + 1)
        }
    }

    @inline(__always)
    private func checkArgumentCount(_ count: Int) throws {
        guard count == parameterPositions.count else { throw argumentCountError(count) }
    }

    /// The error for `count` arguments where the query takes ``parameterCount``.
    @usableFromInline
    func argumentCountError(_ count: Int) -> CofferError {
        CofferError(
            code: .range, message: "prepared query expects \(parameterPositions.count) arguments, got \(count)", sql: sql)
    }

    /// This connection's statement for the shape, with the constants bound; marked in use until ``end(_:)``,
    /// so that a nested execution compiles its own.
    @usableFromInline
    func begin(_ db: Connection) throws -> Statement {
        let statement = try db.preparedQueryStatement(id: shapeID, sql: sql)  // checked out (in use)
        guard template.count > parameterPositions.count else { return statement }
        do {
            var nextParameter = 0
            for (position, constant) in template.enumerated() {
                if nextParameter < parameterPositions.count, parameterPositions[nextParameter] == position {
                    nextParameter += 1
                } else {
                    try statement.bind(constant, toParameter: position + 1)
                }
            }
        } catch {
            end(statement)
            throw error
        }
        return statement
    }

    /// Resets the statement and releases it for the next execution.
    @usableFromInline
    func end(_ statement: Statement) {
        statement.checkIn()
    }
}

extension Query {
    /// Renders the query once into a ``PreparedQuery`` that runs with new arguments each time.
    ///
    /// ```swift
    /// let recent = try Message.filter { $0.conversationID == .parameter && $0.createdAt > .parameter }
    ///     .order { $0.createdAt.desc }.limit(50).prepared()
    /// let page = try recent.fetchAll(db, conversation, cutoff)
    /// ```
    ///
    /// Throws when the query cannot be rendered (an identifier SQLite cannot represent, a value that
    /// failed to encode); SQL errors such as a missing table surface at the first execution.
    public func prepared() throws -> PreparedQuery<Root> { try PreparedQuery(query: self) }
}

/// The identifier of each prepared SQL text, so equal shapes share one statement per connection.
///
/// Consulted once per `prepared()` call, never per execution; it grows with the distinct query shapes
/// the program prepares.
final class PreparedQueryShapes: @unchecked Sendable {
    static let shared = PreparedQueryShapes()
    private let lock = NSLock()
    // Guarded by `lock`.
    private var identifiers: [String: Int] = [:]

    func identifier(for sql: String) -> Int {
        lock.withLock {
            if let identifier = identifiers[sql] { return identifier }
            let identifier = identifiers.count + 1
            identifiers[sql] = identifier
            return identifier
        }
    }
}
