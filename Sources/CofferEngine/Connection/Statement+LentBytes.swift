// Statement+LentBytes — binding a row of values in place, each TEXT or BLOB from the bytes it lends.
//
// One recursion serves every caller that binds a whole row without copying: arguments and records
// (`DatabaseValue`) and repair's bulk load (salvaged values). Each TEXT or BLOB is bound inside the scope
// that keeps its bytes alive (`SQLITE_STATIC`), the next values inside that scope, and the caller's body
// runs innermost, so it steps the statement while every pointer is valid and resets it before they go.

/// A value that binds to a statement parameter, lending its TEXT or BLOB bytes in place rather than
/// copying them into SQLite.
@usableFromInline
package protocol BytesLendingValue {
    /// Binds the value to the parameter at `position` (from 1) and returns true when it has no bytes to
    /// lend (NULL, INTEGER, REAL, or a value the conformer copies); returns false, binding nothing,
    /// otherwise.
    func bindWithoutLending(to statement: Statement, at position: Int32) throws -> Bool
    /// Binds the value's bytes in place to the parameter at `position` and runs `body` while they are
    /// alive.
    func withBytesBound<T>(to statement: Statement, at position: Int32, _ body: () throws -> T) throws -> T
}

extension Statement {
    /// Binds `values[index...]` to parameters from `parameter` on, each TEXT or BLOB inside the scope that
    /// keeps its bytes alive, and runs `body` innermost, once. Sets `bytesBound` when any value was bound in
    /// place: the caller must then reset the statement and clear its bindings (``resetClearingBindings()``)
    /// before `body` returns or right after, never later.
    ///
    /// Generic over the values alone, not over a result: every caller names its values' type, so the
    /// recursion is specialized for it even where the caller's own result type is generic (a result type
    /// left generic kept the whole recursion unspecialized, each value read through witness tables).
    /// A caller with a result keeps it from `body` (``withBound(_:_:)``).
    @inlinable
    package func bindInPlace<Values: Collection>(
        _ values: Values, from index: Values.Index, parameter: Int32, bytesBound: inout Bool, _ body: () throws -> Void
    ) throws where Values.Element: BytesLendingValue {
        var index = index
        var parameter = parameter
        while index != values.endIndex {
            let value = values[index]
            values.formIndex(after: &index)
            if try value.bindWithoutLending(to: self, at: parameter) {
                parameter += 1
                continue
            }
            bytesBound = true
            let next = index
            let nextParameter = parameter + 1
            return try value.withBytesBound(to: self, at: parameter) {
                try bindInPlace(values, from: next, parameter: nextParameter, bytesBound: &bytesBound, body)
            }
        }
        try body()
    }
}

extension DatabaseValue: BytesLendingValue {
    /// Binds NULL, INTEGER, REAL and empty TEXT or BLOB (copied: SQLite would read a missing pointer as
    /// NULL); leaves non-empty TEXT and BLOB to ``withBytesBound(to:at:_:)``.
    @usableFromInline
    package func bindWithoutLending(to statement: Statement, at position: Int32) throws -> Bool {
        switch self {
        case .text(let text) where !text.isEmpty: return false
        case .blob(let data) where !data.isEmpty: return false
        default:
            try statement.bind(self, toParameter: Int(position))
            return true
        }
    }

    /// Binds TEXT from the string's own UTF-8 and BLOB from the data's own bytes while `body` runs.
    @usableFromInline
    package func withBytesBound<T>(to statement: Statement, at position: Int32, _ body: () throws -> T) throws -> T {
        try statement.withBound(self, at: position, body)
    }
}
