// The statements of an association, rendered once per shape, and the key table an eager load stitches
// its records with.

import CSQLCipher
import CofferEngine
import Foundation

/// An association's destination query restricted to its key, rendered once and shared by every copy of
/// the association (a changed filter or ordering makes a new one): `column = ?` for lazy loads, and
/// `column IN (?, …)` for each padded key count of eager loads. Each is a ``PreparedQuery``, so its
/// statement comes from the connection's prepared-query store by index: no SQL built or hashed per load.
final class AssociationQueries<Destination: TableRecord>: @unchecked Sendable {
    private let lock = NSLock()
    // Guarded by `lock`.
    private var singleKey: PreparedQuery<Destination>?
    private var membership: [Int: PreparedQuery<Destination>] = [:]
    private var otherArguments: Int?

    /// The single-key query, made by `make` the first time.
    func singleKey(_ make: () throws -> PreparedQuery<Destination>) throws -> PreparedQuery<Destination> {
        try lock.withLock {
            if let singleKey { return singleKey }
            let made = try make()
            singleKey = made
            return made
        }
    }

    /// The query taking `count` keys, made by `make` the first time.
    func membership(
        count: Int, _ make: () throws -> PreparedQuery<Destination>
    ) throws -> PreparedQuery<Destination> {
        try lock.withLock {
            if let query = membership[count] { return query }
            let made = try make()
            membership[count] = made
            return made
        }
    }

    /// The number of values the destination query binds besides the keys, counted by `count` the first time.
    func otherArgumentCount(_ count: () throws -> Int) throws -> Int {
        try lock.withLock {
            if let otherArguments { return otherArguments }
            let counted = try count()
            otherArguments = counted
            return counted
        }
    }
}

extension AssociationLink {
    /// The destination query restricted to `column = ?`.
    func singleKeyQuery() throws -> PreparedQuery<Destination> {
        try queries.singleKey {
            var restricted = destinationQuery
            restricted.filters.append(
                SQLFragment([.column(table: Destination.tableName, name: destinationColumn)]) + SQLFragment(raw: " = ")
                    + SQLFragment([.parameter]))
            return try restricted.prepared()
        }
    }

    /// The destination query restricted to `column IN (?, …)` with `count` parameters.
    func membershipQuery(count: Int) throws -> PreparedQuery<Destination> {
        try queries.membership(count: count) {
            var restricted = destinationQuery
            restricted.filters.append(
                SQLFragment([.column(table: Destination.tableName, name: destinationColumn)]) + SQLFragment(raw: " IN ")
                    + SQLFragment.join(Array(repeating: SQLFragment([.parameter]), count: count), separator: ", ")
                    .parenthesized)
            return try restricted.prepared()
        }
    }

    /// The values the destination query binds besides the keys (its filters' constants). Throws
    /// `apiMisuse` when it holds a ``QueryParameter``: an association's values are constants.
    func otherArgumentCount() throws -> Int {
        try queries.otherArgumentCount { try destinationQuery.selectFragment.render().arguments.values.count }
    }
}

/// The distinct non-NULL keys of an eager load's origins in first-seen order, each origin row's slot
/// (the position of its key among them, -1 for NULL), and the slot of a matched row's key. Integer keys,
/// the common case, are hashed as `Int64`; other values as ``DatabaseValue``s. Keys compare as
/// ``DatabaseValue``s do: the integer 1 and the text '1' are different keys.
struct KeySlots {
    /// The distinct non-NULL keys, in the order the origins gave them.
    private(set) var keys: [DatabaseValue] = []
    /// Each origin row's slot, -1 when its key is NULL.
    private(set) var rowSlots: [Int] = []
    /// The slots of integer keys, in a table that hashes an `Int64` in a few instructions (a lookup per
    /// associated row).
    private var integerSlots = IntegerKeyIndex()
    private var otherSlots: [DatabaseValue: Int] = [:]

    /// Adds an origin row whose key is `column` of `statement`'s current row.
    mutating func appendRow(keyAt column: Int, of statement: Statement) {
        let position = Int32(column)
        switch sqlite3_column_type(statement.handle, position) {
        case SQLITE_NULL:
            rowSlots.append(-1)
        case SQLITE_INTEGER:
            let value = sqlite3_column_int64(statement.handle, position)
            if let slot = integerSlots[value] {
                rowSlots.append(slot)
            } else {
                integerSlots.set(keys.count, for: value)
                rowSlots.append(keys.count)
                keys.append(.integer(value))
            }
        default:
            let value = statement.value(at: column)
            if let slot = otherSlots[value] {
                rowSlots.append(slot)
            } else {
                otherSlots[value] = keys.count
                rowSlots.append(keys.count)
                keys.append(value)
            }
        }
    }

    /// The slot of the key in `column` of `statement`'s current row, or nil when no origin has it.
    func slot(ofKeyAt column: Int, in statement: Statement) -> Int? {
        // The column's value fetched once, its type and integer read from it: one statement and column
        // check instead of two (this runs once per associated row).
        let value = sqlite3_column_value(statement.handle, Int32(column))
        switch sqlite3_value_type(value) {
        case SQLITE_NULL: return nil
        case SQLITE_INTEGER: return integerSlots[sqlite3_value_int64(value)]
        default: return otherSlots[statement.value(at: column)]
        }
    }
}
