import CSQLCipher
import CofferEngine
import Foundation

/// Binds a record's columns straight into an insert or update statement, parameter `n` for the record's
/// `n`th column (``TableRecord/columnDefinitions`` order): what the binder `@Table` generates,
/// ``TableRecord/bindColumns(to:then:)``, calls once per property.
///
/// Each call binds one value and then runs `rest`, which binds the next column or runs the statement.
/// Text and blobs are bound in place from the value's own bytes (`SQLITE_STATIC`, no copy), valid for
/// exactly as long as `rest` runs; the statement is reset and its bindings cleared before they can go
/// away.
///
/// ```swift
/// // What `@Table` generates for `struct Note { var id: Int64?; var body: String }`:
/// func bindColumns(to binder: RecordBinder, then body: () throws -> Void) throws {
///     let value1 = try DatabaseValue.optionalColumnValue(self.id)
///     let value2 = try DatabaseValue.columnValue(self.body)
///     try binder.bind(value1, at: 1) {
///         try binder.bind(value2, at: 2) { try body() }
///     }
/// }
/// ```
public struct RecordBinder {
    let statement: Statement

    /// Binds `value` to the parameter at `parameter` (from 1), then runs `rest` while it is bound.
    public func bind(_ value: DatabaseValue, at parameter: Int32, then rest: () throws -> Void) throws {
        try statement.withBound(value, at: parameter, rest)
    }

    // MARK: Any record

    /// Binds column values from ``TableRecord/columnValues()`` (the binder of a type `@Table` generates
    /// none for), then runs `rest`.
    public func bind(_ values: [DatabaseValue], then rest: () throws -> Void) throws {
        let expected = Int(sqlite3_bind_parameter_count(statement.handle))
        guard values.count == expected else {
            throw CofferError(
                code: .range, message: "statement expects \(expected) arguments, got \(values.count)", sql: statement.sql)
        }
        var bytesBound = false
        try statement.bindInPlace(values, from: 0, parameter: 1, bytesBound: &bytesBound, rest)
    }
}

extension Statement {
    /// Binds `record`'s columns with its ``TableRecord/bindColumns(to:then:)``, runs the statement to
    /// completion once, then resets it and clears its bindings, so that it keeps no pointer into the
    /// record.
    func execute<Record: TableRecord>(binding record: Record) throws {
        defer { resetClearingBindings() }
        var runs = 0
        try record.bindColumns(to: RecordBinder(statement: self)) {
            runs += 1
            guard runs == 1 else { return }
            while try step() {}
        }
        guard runs == 1 else {
            throw CofferError(
                code: .apiMisuse, message: "\(Record.self).bindColumns(to:then:) must run its body exactly once, ran \(runs)")
        }
    }
}
